package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/runs"
)

const (
	mimeDiff = "text/x-diff"
	// maxListedRuns bounds the runs in resources/list: an agent wants the
	// last few; any kept run is still read by its URI.
	maxListedRuns = 20
	runsURIPrefix = "omni://runs/"
	runsURISuffix = "/diff"
)

func runURI(id string) string { return runsURIPrefix + id + runsURISuffix }

// runResources offers each run's diff as omni://runs/<id>/diff, the last
// maxListedRuns of them in resources/list.
type runResources struct {
	srv *mcp.Server
	e   *engine.Engine
	mu  sync.Mutex
	// listed are the ids of the runs listed, oldest first.
	listed []string
}

func addRunResources(ctx context.Context, s *mcp.Server, e *engine.Engine) *runResources {
	r := &runResources{srv: s, e: e}
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: runsURIPrefix + "{id}" + runsURISuffix, Name: "run-diff", Title: "Diff of a run",
		Description: "The unified diff of the files a run (omni_execute's run_id) changed, as `omnidev runs show` prints it.",
		MIMEType:    mimeDiff,
	}, r.read)
	err := e.ReadRuns(func(st *runs.Store) error {
		recs, err := st.List(maxListedRuns)
		for _, rec := range slices.Backward(recs) {
			r.add(rec.ID, describe(rec.ExitCode, len(rec.Files)))
		}
		return err
	})
	if err != nil {
		e.Logger().Warn("list the recent runs as resources", "err", err)
	}
	return r
}

func describe(exit, files int) string {
	return fmt.Sprintf("exit code %d, %d files changed", exit, files)
}

// ran lists the run res recorded.
func (r *runResources) ran(res *execute.Result) {
	if res.RunID != "" {
		r.add(res.RunID, describe(res.ExitCode, res.DiffStat.Files))
	}
}

func (r *runResources) add(id, desc string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.srv.AddResource(&mcp.Resource{URI: runURI(id), Name: "run " + id, Title: "Diff of run " + id, Description: desc, MIMEType: mimeDiff}, r.read)
	r.listed = append(r.listed, id)
	if n := len(r.listed) - maxListedRuns; n > 0 {
		var old []string
		for _, id := range r.listed[:n] {
			old = append(old, runURI(id))
		}
		r.srv.RemoveResources(old...)
		r.listed = slices.Clone(r.listed[n:])
	}
}

// read answers resources/read of a run's diff.
func (r *runResources) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, runsURIPrefix)
	if id, ok = strings.CutSuffix(id, runsURISuffix); !ok || id == "" || strings.Contains(id, "/") {
		return nil, notFound(uri, "%s is not the URI of a run's diff: omni://runs/<run_id>/diff", uri)
	}
	var diff strings.Builder
	err := r.e.ReadRuns(func(st *runs.Store) error {
		rec, err := st.Get(id)
		if err != nil {
			return err
		}
		return st.WriteDiff(&diff, rec)
	})
	if errors.Is(err, runs.ErrNotFound) {
		return nil, notFound(uri, "no run %s is kept (resources/list names the recent ones)", id)
	}
	if err != nil {
		return nil, fault(r.e.Logger(), "read "+uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeDiff, Text: diff.String()}}}, nil
}
