package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/query"
)

// The stdio transport answers the plain calls of omni_query itself: a
// tools/call whose arguments are already what the SDK would hand the tool's
// handler after checking them against the input schema and filling in its
// defaults. It calls the same handler with them, and answers as the SDK
// would (the same result, the same errors); every other message, and every
// call with anything else in it, goes to the SDK as before. Both kinds of
// session are served: opened by initialize, and on the 2026-07-28
// protocol, whose requests each carry the client's _meta (directCalls).
//
// Why: on a query the SDK's own work was as much as the search's. It
// decodes the arguments into a map to check them against the schema and
// encodes them again; then it encodes the result by reflection and
// re-validates those bytes twice (once inside CallToolResult's MarshalJSON,
// once around it). BenchmarkQueryCorpus/raw on 2,000 npm READMEs, in the
// same minutes: server CPU per query 1,370–1,510 µs through the SDK,
// 905–955 µs answered here; p50 0.95–1.13 ms against 0.65–0.68 ms. The
// go-sdk v1.8 client, on 2026-07-28 (BenchmarkQuery/go-sdk, generated
// docs): p50 3.49–3.61 ms against 2.65–2.79 ms.
//
// The Streamable HTTP transport keeps the SDK's way for everything.

// directTool is a tool whose plain calls a stdioConn answers.
type directTool struct {
	name string
	// prepare returns the call for args, or false when the SDK must answer
	// it: when args are anything but what the SDK would pass the handler
	// after validation, as they are (TestDirectQueryArgsMatchTheSDK).
	prepare func(args json.RawMessage) (call func(context.Context) (*mcp.CallToolResult, error), ok bool)
}

// directQuery is omni_query's direct path, with the handler the SDK calls.
func directQuery(e *engine.Engine) directTool {
	h := queryHandler(e)
	return directTool{name: "omni_query", prepare: func(args json.RawMessage) (func(context.Context) (*mcp.CallToolResult, error), bool) {
		p, ok := directQueryArgs(args)
		if !ok {
			return nil, false
		}
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "omni_query", Arguments: args}}
			res, _, err := h(ctx, req, p)
			return res, err
		}, true
	}}
}

// directQueryArgs decodes omni_query's arguments when they are an object
// of its own properties with values its schema accepts as they are, and
// applies the default limit; otherwise it returns false and the SDK decides
// (it validates, and refuses or converts what is unusual: 1e1 as a limit, a
// null, an unknown property).
func directQueryArgs(raw json.RawMessage) (queryParams, bool) {
	p := queryParams{Limit: query.DefaultLimit}
	if len(raw) == 0 {
		return p, true // no arguments: the SDK validates {}
	}
	if !utf8.Valid(raw) {
		return p, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return p, false
	}
	for k, v := range fields {
		switch k {
		case "query":
			if v[0] != '"' || json.Unmarshal(v, &p.Query) != nil {
				return p, false
			}
		case "limit":
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 1 || n > query.MaxLimit || v[0] == '+' || v[0] == '-' || (v[0] == '0' && len(v) > 1) {
				return p, false
			}
			p.Limit = queryLimit(n)
		case "include_types":
			switch string(v) {
			case "true":
				p.IncludeTypes = true
			case "false":
			default:
				return p, false
			}
		case "kinds":
			var kinds []string
			if v[0] != '[' || json.Unmarshal(v, &kinds) != nil {
				return p, false
			}
			p.Kinds = make([]resultKind, 0, len(kinds))
			for _, k := range kinds {
				if !slices.Contains(query.Kinds(), k) {
					return p, false
				}
				p.Kinds = append(p.Kinds, resultKind(k))
			}
		default:
			return p, false
		}
	}
	return p, true
}

// directCalls are a stdioConn's calls in flight on the direct path, and
// what it knows of the session: when the SDK takes calls, and how it
// answers them.
//
// A session is one of two kinds. On the protocols with sessions (before
// 2026-07-28) the SDK takes calls once it has answered initialize, and a
// call's _meta holds a progress token at most. On 2026-07-28 (SEP-2575)
// each request carries the client's protocol version, information and
// capabilities in its _meta, which the SDK checks, and it adds to each
// result a resultType and, in _meta, its own information. The direct path
// takes such a call only when its _meta, the progress token aside, is one
// the SDK has already accepted on this session (clients send the same one
// each time), and adds what the SDK's answers held.
type directCalls struct {
	tools  map[string]directTool
	logger *slog.Logger

	mu       sync.Mutex
	initID   jsonrpc.ID            // the initialize request's, until it is answered
	ready    bool                  // initialize answered, on a protocol with sessions
	asked    map[jsonrpc.ID]string // calls left to the SDK with a per-request protocol version: their metaKey
	known    map[string]bool       // metaKeys of the calls the SDK answered
	info     json.RawMessage       // the server information the SDK put in those answers
	closed   bool
	inFlight map[jsonrpc.ID]context.CancelFunc
	wg       sync.WaitGroup
}

// maxKnownMeta bounds the per-request _meta a session remembers.
const maxKnownMeta = 8

// newProtocol is the first protocol version whose requests each carry the
// client's version, information and capabilities (SEP-2575).
const newProtocol = "2026-07-28"

// callParams are the parts of a tools/call's params the direct path takes;
// anything else in them leaves the call to the SDK.
type callParams struct {
	Name      string
	Arguments json.RawMessage
	// meta is _meta, progress token aside, as metaKey writes it; "" for
	// none. perRequest: it holds a protocol version of newProtocol or
	// after.
	meta       string
	perRequest bool
}

// decodeCallParams returns params as callParams when they hold a name,
// maybe arguments, and maybe a _meta (an object); false otherwise.
func decodeCallParams(params json.RawMessage) (callParams, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(params, &fields) != nil {
		return callParams{}, false
	}
	var p callParams
	for k, v := range fields {
		switch k {
		case "name":
			if v[0] != '"' || json.Unmarshal(v, &p.Name) != nil {
				return p, false
			}
		case "arguments":
			p.Arguments = v
		case "_meta":
			var ok bool
			if p.meta, p.perRequest, ok = metaKey(v); !ok {
				return p, false
			}
		default:
			return p, false
		}
	}
	return p, p.Name != ""
}

// metaKey returns a request's _meta without its progress token, as sorted
// keys and raw values, and whether it holds a protocol version of
// newProtocol or after; false when _meta is not an object.
func metaKey(raw json.RawMessage) (key string, perRequest, ok bool) {
	var meta map[string]json.RawMessage
	if json.Unmarshal(raw, &meta) != nil || meta == nil {
		return "", false, false
	}
	var version string
	if v, has := meta[mcp.MetaKeyProtocolVersion]; has && json.Unmarshal(v, &version) == nil {
		perRequest = version >= newProtocol
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if k != "progressToken" {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			b.Write(meta[k])
			b.WriteByte('\n')
		}
	}
	return b.String(), perRequest, true
}

// seen notes what the direct path must know of a message read: the
// initialize request, whose answer opens the session to calls, and a
// cancellation of a direct call. It returns true when it answers req
// itself, false when req goes to the SDK.
func (d *directCalls) seen(req *jsonrpc.Request, c *stdioConn) bool {
	switch req.Method {
	case "initialize":
		if req.ID.IsValid() {
			d.mu.Lock()
			d.initID = req.ID
			d.mu.Unlock()
		}
	case "notifications/cancelled":
		// Passed on as well: the SDK ignores an id it does not know.
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				d.mu.Lock()
				cancel := d.inFlight[id]
				d.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
	case "tools/call":
		if d.call(req, c) {
			return true
		}
	}
	// A call left to the SDK with a per-request protocol version: its
	// answer tells whether the SDK accepts that _meta.
	if req.ID.IsValid() && bytes.Contains(req.Params, []byte(mcp.MetaKeyProtocolVersion)) {
		var p struct {
			Meta json.RawMessage `json:"_meta"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.Meta != nil {
			if key, perRequest, ok := metaKey(p.Meta); ok && perRequest {
				d.mu.Lock()
				if d.asked == nil {
					d.asked = make(map[jsonrpc.ID]string)
				}
				d.asked[req.ID] = key
				d.mu.Unlock()
			}
		}
	}
	return false
}

// answered notes a response the SDK wrote: once it has answered initialize
// on a protocol with sessions, the session takes plain calls; once it has
// answered a call with a per-request protocol version, calls with the same
// _meta.
func (d *directCalls) answered(resp *jsonrpc.Response) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if resp.Error != nil {
		delete(d.asked, resp.ID)
		return
	}
	if d.initID.IsValid() && resp.ID == d.initID {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		d.ready = json.Unmarshal(resp.Result, &r) == nil && r.ProtocolVersion != "" && r.ProtocolVersion < newProtocol
		return
	}
	key, ok := d.asked[resp.ID]
	if !ok {
		return
	}
	delete(d.asked, resp.ID)
	var r struct {
		Meta struct {
			Info json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(resp.Result, &r) == nil && r.Meta.Info != nil && r.ResultType == "complete" {
		if d.known == nil || len(d.known) >= maxKnownMeta {
			d.known = make(map[string]bool) // a client sends one; a stream of others is not kept
		}
		d.known[key] = true
		d.info = r.Meta.Info
	}
}

func (d *directCalls) call(req *jsonrpc.Request, c *stdioConn) bool {
	if !req.ID.IsValid() {
		return false
	}
	p, ok := decodeCallParams(req.Params)
	if !ok {
		return false
	}
	d.mu.Lock()
	var info json.RawMessage
	if p.perRequest {
		ok, info = d.known[p.meta], d.info
	} else {
		ok = d.ready && p.meta == ""
	}
	_, dup := d.inFlight[req.ID]
	ok = ok && !dup && !d.closed
	d.mu.Unlock()
	if !ok {
		return false
	}
	tool, ok := d.tools[p.Name]
	if !ok {
		return false
	}
	run, ok := tool.prepare(p.Arguments)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.mu.Lock()
	if d.closed { // closed while the call was decoded
		d.mu.Unlock()
		cancel()
		return false
	}
	if d.inFlight == nil {
		d.inFlight = make(map[jsonrpc.ID]context.CancelFunc)
	}
	d.inFlight[req.ID] = cancel
	d.wg.Add(1)
	d.mu.Unlock()
	go func() {
		defer d.wg.Done()
		res, err := d.run(ctx, run, p.Name)
		// Out of the map before the answer, as in the SDK: the client may
		// reuse the id once it has its answer.
		d.mu.Lock()
		delete(d.inFlight, req.ID)
		d.mu.Unlock()
		cancel()
		d.reply(c, req.ID, res, err, info)
	}()
	return true
}

// run calls the tool, with what the SDK's handler for it adds: a panic is
// an internal error (recoverPanics) and a result is never nil.
func (d *directCalls) run(ctx context.Context, call func(context.Context) (*mcp.CallToolResult, error), tool string) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, panicError(d.logger, "tools/call", tool, r)
		}
	}()
	res, err = call(ctx)
	if res == nil && err == nil {
		res = &mcp.CallToolResult{}
	}
	return res, err
}

// reply writes the answer the SDK would: a JSON-RPC error for a
// *jsonrpc.Error, a tool error (isError) for any other error, else the
// result; with info (a call on the per-request protocol), the server
// information in its _meta and a resultType.
func (d *directCalls) reply(c *stdioConn, id jsonrpc.ID, res *mcp.CallToolResult, err error, info json.RawMessage) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return
	}
	ctx := context.Background() // a cancelled call is answered too, as the SDK does
	if werr, ok := err.(*jsonrpc.Error); ok {
		c.Write(ctx, &jsonrpc.Response{ID: id, Error: werr})
		return
	}
	if err != nil {
		res = &mcp.CallToolResult{}
		res.SetError(err)
	}
	data, err := encodeResult(res, info)
	if err != nil {
		d.logger.Error("encode a tool result", "err", err)
		c.Write(ctx, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encode the result: " + err.Error()}})
		return
	}
	if err := c.writeResult(id, data); err != nil {
		d.logger.Warn("write a tool result", "err", err)
	}
}

// encodeResult encodes res as the SDK does; with info, as it does on the
// per-request protocol. A result whose structured content is its one text,
// the JSON the tools' result encoded, is put together directly: those
// bytes are valid, compact JSON already.
func encodeResult(res *mcp.CallToolResult, info json.RawMessage) ([]byte, error) {
	if info != nil {
		meta := maps.Clone(res.Meta)
		if meta == nil {
			meta = mcp.Meta{}
		}
		if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
			meta[mcp.MetaKeyServerInfo] = info
		}
		res.Meta = meta
	}
	data, err := encodeResultBody(res)
	if err != nil || info == nil {
		return data, err
	}
	// resultType, which the SDK sets with a method of its own.
	return append(data[:len(data)-1], `,"resultType":"complete"}`...), nil
}

func encodeResultBody(res *mcp.CallToolResult) ([]byte, error) {
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	var text *mcp.TextContent
	if len(res.Content) == 1 {
		text, _ = res.Content[0].(*mcp.TextContent)
	}
	if !isRaw || text == nil || string(raw) != text.Text || text.Meta != nil || text.Annotations != nil ||
		res.IsError || res.InputRequests != nil || res.RequestState != "" {
		return json.Marshal(res)
	}
	var b bytes.Buffer
	b.Grow(2*len(text.Text) + len(raw) + 64)
	b.WriteString(`{"content":[{"type":"text","text":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(text.Text); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	b.WriteString(`}],"structuredContent":`)
	b.Write(raw)
	if res.Meta != nil {
		meta, err := json.Marshal(res.Meta)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"_meta":`)
		b.Write(meta)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// close stops taking calls, cancels those in flight and waits for them.
func (d *directCalls) close() {
	d.mu.Lock()
	d.closed = true
	for _, cancel := range d.inFlight {
		cancel()
	}
	d.mu.Unlock()
	d.wg.Wait()
}
