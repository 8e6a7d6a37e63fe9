package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
)

// runtimeNotice tells a client, once it connects and again when it asks
// for log messages, that programs cannot run because the runtime is
// missing, with the sentence omni_execute's tool error gives. The SDK sends
// log messages only to a client that set a level, hence both moments.
func runtimeNotice(e *engine.Engine) (onInitialized func(context.Context, *mcp.InitializedRequest), middleware mcp.Middleware) {
	notice := func(ctx context.Context, ss *mcp.ServerSession) {
		if err := e.RuntimeError(); err != nil {
			ss.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "omnidev", Data: "omni_execute cannot run programs: " + err.Error()})
		}
	}
	onInitialized = func(ctx context.Context, req *mcp.InitializedRequest) { notice(ctx, req.Session) }
	middleware = func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && err == nil && method == "logging/setLevel" {
				notice(ctx, ss)
			}
			return res, err
		}
	}
	return onInitialized, middleware
}
