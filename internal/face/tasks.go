package face

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/plexus-mcp/plexus/internal/config"
	"github.com/plexus-mcp/plexus/internal/era"
	"github.com/plexus-mcp/plexus/internal/upstream"
)

// The tasks extension passes through a bare profile in both eras: its
// tools' execution.taskSupport is in their definitions (served as the
// server wrote them), a call that asks for a task (params.task) is
// forwarded whole (call.go) and gets the server's task back, and the
// extension's own requests — tasks/get, tasks/result, tasks/list,
// tasks/cancel — are forwarded here as the client wrote them, their
// answers coming back as the server wrote them. Neither SDK server the
// face runs knows them. A profile that gathers servers cannot say which
// server a task id is of, and answers them "method not found".

// isTaskMethod reports whether method is one of the tasks extension's
// requests.
func isTaskMethod(method string) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	}
	return false
}

// taskServer is the server a profile passes the tasks extension to: a
// bare profile's one server.
func (p *profile) taskServer() (string, bool) {
	if !p.def.external || p.def.naming != config.NamingBare || len(p.def.servers) != 1 {
		return "", false
	}
	return p.def.servers[0], true
}

// forwardTask sends a tasks extension request to server and returns its
// result as the client's era reads it.
func (p *profile) forwardTask(ctx context.Context, server, version, method string, params json.RawMessage) (json.RawMessage, error) {
	conn, err := p.f.h.ServerConn(server)
	if err != nil {
		return nil, passOn(err)
	}
	res, err := conn.Forward(ctx, method, params)
	if err != nil {
		return nil, passOn(err)
	}
	return era.ForClient(version, res), nil
}

// task forwards a session's tasks extension request; false leaves it to
// the SDK's server. It runs as a call does: the client's
// notifications/cancelled ends it (tasks/result may wait long).
func (s *session) task(r *http.Request, ex *exchange, key string, m envelope) bool {
	server, ok := s.p.taskServer()
	version, _ := s.era()
	if !ok || version == "" {
		return false
	}
	return s.run(r, context.WithoutCancel(r.Context()), ex, key, m.id, func(ctx context.Context) (json.RawMessage, error) {
		// On the client's own session at the server, where its tasks are.
		ctx = upstream.WithPeer(ctx, &sessionPeer{s, ex}, nil)
		return s.p.forwardTask(ctx, server, version, m.name, m.params)
	})
}

// task2026 forwards a stateless client's tasks extension request; false
// leaves it to the SDK's stateless handler.
func (p *profile) task2026(w http.ResponseWriter, r *http.Request, env envelope) bool {
	server, ok := p.taskServer()
	if !ok || !env.isRequest() {
		return false
	}
	res, err := p.forwardTask(r.Context(), server, era.Stateless, env.name, env.params)
	if r.Context().Err() != nil {
		return true // the client closed its request: it cancelled it
	}
	writeJSON(w, answerStatus(err), callAnswer(env.id, res, err))
	return true
}
