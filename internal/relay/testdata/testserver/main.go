// Command testserver is a misbehaving MCP server for the relay's tests: it
// crashes mid-call, answers slowly, changes its tool list, fails, returns
// structured content and large results. It serves stdio, or Streamable HTTP
// on the address given with -http (printing its URL on stdout).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type sleepIn struct {
	MS int `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
}

type bigIn struct {
	Bytes int `json:"bytes"`
}

type weatherIn struct {
	City string `json:"city"`
}

type weatherOut struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	token := flag.String("token", "", "with -http: the bearer token every request must carry")
	apiTools := flag.Int("tools", 0, "also serve this many tools shaped like a big API's: get_zone_<i>, a sentence of description, four parameters")
	flag.Parse()
	// CANCEL_FILE receives a line each time a sleep is cancelled.
	cancelFile := os.Getenv("CANCEL_FILE")
	if p := os.Getenv("PID_FILE"); p != "" {
		os.WriteFile(p, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644)
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("Echo: " + in.Message), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Lists the server's environment"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(strings.Join(os.Environ(), "\n")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps, reporting progress"}, func(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "sleeping"})
		}
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "testserver", Data: "sleep started"})
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			return text("slept"), nil, nil
		case <-ctx.Done():
			if cancelFile != "" {
				f, err := os.OpenFile(cancelFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err == nil {
					fmt.Fprintln(f, "cancelled")
					f.Close()
				}
			}
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits in the middle of the call"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "detach", Description: "Starts a process in a session of its own that holds the server's stderr for a minute, and returns its pid"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		cmd := exec.Command("sleep", "60")
		cmd.Stderr = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Returns isError"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		r := text("the widget is broken")
		r.IsError = true
		return r, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "weather", Description: "Structured weather"}, func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, weatherOut, error) {
		return nil, weatherOut{City: in.City, Temperature: 21.5}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "unsorted", Description: "Returns structured content as written: keys out of order, a number as 1.0"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		const out = `{"z":1,"a":[1.0]}`
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}, StructuredContent: json.RawMessage(out)}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a text of the given size"}, func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
		return text(strings.Repeat("x", in.Bytes)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add-tool", Description: "Adds the tool fresh-tool"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "fresh-tool", Description: "A tool added while running"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("fresh"), nil, nil
		})
		return text("added"), nil, nil
	})
	addAPITools(s, *apiTools)

	if *addr == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if *token != "" && r.Header.Get("Authorization") != "Bearer "+*token {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})))
}

// addAPITools adds n tools shaped like those of a big API's server: each
// answers with its name and the zone it was asked for.
func addAPITools(s *mcp.Server, n int) {
	for i := range n {
		name := fmt.Sprintf("get_zone_%d", i)
		schema := json.RawMessage(`{"type":"object","properties":{` +
			`"zone_id":{"type":"string","description":"The zone's identifier, as listed by the account."},` +
			`"include_records":{"type":"boolean","description":"Also return the zone's DNS records."},` +
			`"page":{"type":"integer","minimum":1,"description":"Which page of records to return."},` +
			`"fields":{"type":"array","items":{"type":"string"},"description":"The fields to return; all when absent."}},` +
			`"required":["zone_id"]}`)
		s.AddTool(&mcp.Tool{
			Name:        name,
			Description: fmt.Sprintf("Returns the settings and status of a zone of shard %d of the account, optionally with its DNS records.", i),
			InputSchema: schema,
		}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				ZoneID string `json:"zone_id"`
			}
			json.Unmarshal(req.Params.Arguments, &in)
			return text(name + " " + in.ZoneID), nil
		})
	}
}
