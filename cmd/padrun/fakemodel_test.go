//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// fakeModel is a model server for the real harnesses: OpenAI chat
// completions (pi, qwen, copilot), Anthropic messages (claude, whose Bash
// tool RUN calls when the turn offers it), OpenAI
// responses (codex) and Gemini's generateContent (gemini), all streamed.
// What it answers is chosen by the last user message:
//
//	RUN:cmd         call the bash tool with cmd, then answer "done"
//	WAITFOR:path    hold the answer until path exists
//	BARRIER:n       hold the answer until n requests hold BARRIER
//	anything else   answer "ok"
//
// Every request is logged, one line each, to the log file.
type fakeModel struct {
	URL     string
	work    string // relative WAITFOR paths are in this folder
	log     string
	srv     *http.Server
	mu      sync.Mutex
	barrier map[string]chan struct{}
	waiting map[string]int
}

func startFakeModel(work, logFile string) (*fakeModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &fakeModel{URL: "http://" + ln.Addr().String(), work: work, log: logFile, barrier: map[string]chan struct{}{}, waiting: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", m.chat)
	mux.HandleFunc("/v1/messages", m.messages)
	mux.HandleFunc("/v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"input_tokens":10}`)
	})
	mux.HandleFunc("/v1/responses", m.responses)
	mux.HandleFunc("/v1beta/models/", m.gemini)
	// A registry as slow as a first install on a slow network:
	// /npm-hold/GATE/... is held until the folder $WORK/GATE exists (or
	// the client goes), then refused.
	mux.HandleFunc("/npm-hold/", func(w http.ResponseWriter, r *http.Request) {
		m.logf("%s %s held", r.Method, r.URL.Path)
		gate, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/npm-hold/"), "/")
		holdUntil(r.Context(), filepath.Join(work, gate))
		http.NotFound(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		m.logf("%s %s unhandled", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	return m, nil
}

func (m *fakeModel) Close() { m.srv.Close() }

func (m *fakeModel) logf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := os.OpenFile(m.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}

// reply is what to answer: text, or a bash tool call.
type reply struct {
	text string
	bash string
}

// decide picks the reply for a prompt, holding it as the prompt says.
func (m *fakeModel) decide(ctx context.Context, endpoint, prompt string, toolResult bool, toolOutput string) reply {
	m.logf("%s request prompt=%q tool_result=%v", endpoint, oneLine(prompt), toolResult)
	if toolResult {
		return reply{text: "done: " + strings.TrimSpace(toolOutput)}
	}
	if _, rest, ok := strings.Cut(prompt, "WAITFOR:"); ok {
		path := strings.Fields(rest)[0]
		if !filepath.IsAbs(path) {
			path = filepath.Join(m.work, path)
		}
		holdUntil(ctx, path)
	}
	if _, rest, ok := strings.Cut(prompt, "BARRIER:"); ok {
		key := strings.Fields(rest)[0]
		var n int
		fmt.Sscan(key, &n)
		m.mu.Lock()
		if m.barrier[key] == nil {
			m.barrier[key] = make(chan struct{})
		}
		c := m.barrier[key]
		m.waiting[key]++
		if m.waiting[key] == n {
			close(c)
		}
		m.mu.Unlock()
		select {
		case <-c:
		case <-time.After(3 * time.Second): // a lone run goes on
		}
	}
	if _, rest, ok := strings.Cut(prompt, "RUN:"); ok {
		return reply{bash: strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0])}
	}
	return reply{text: "ok"}
}

// holdUntil returns once path exists or ctx is done: a held answer has
// no deadline of its own, since a holder that answered by itself would
// end and release its session while a slow test still counts on it. The
// request's context ends when the harness goes, or the server closes at
// the script's end.
func holdUntil(ctx context.Context, path string) {
	for ctx.Err() == nil {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func oneLine(s string) string {
	return strings.ReplaceAll(s, "\n", " ")
}

// textOf joins the text of a message's content: a string or a list of parts.
func textOf(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		if len(p.Content) > 0 {
			b.WriteString(textOf(p.Content))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// chat answers OpenAI chat completions, as pi streams them.
func (m *fakeModel) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	prompt, toolResult, toolOut := "", false, ""
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		toolResult = last.Role == "tool"
		toolOut = textOf(last.Content)
		for i := n - 1; i >= 0; i-- {
			if req.Messages[i].Role == "user" {
				prompt = textOf(req.Messages[i].Content)
				break
			}
		}
	}
	rep := m.decide(r.Context(), "chat", prompt, toolResult, toolOut)
	startSSE(w)
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	if rep.bash != "" {
		args, _ := json.Marshal(map[string]string{"command": rep.bash})
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_fake_1", "type": "function",
			"function": map[string]any{"name": "bash", "arguments": string(args)}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": rep.text}, nil)
		chunk(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// messages answers Anthropic messages, as Claude Code streams them.
func (m *fakeModel) messages(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	// The turn is every message after the last answer: Claude Code sends
	// the prompt and its reminders as separate user messages.
	prompt, toolResult := "", false
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
		prompt = textOf(req.Messages[i].Content) + "\n" + prompt
		toolResult = toolResult || strings.Contains(string(req.Messages[i].Content), `"tool_result"`)
	}
	rep := m.decide(r.Context(), "messages", prompt, toolResult, prompt)
	// Claude Code's side requests (a title, a topic) offer no tools: only a
	// turn that offers Bash gets the call.
	hasBash := slices.ContainsFunc(req.Tools, func(t struct {
		Name string `json:"name"`
	}) bool {
		return t.Name == "Bash"
	})
	text, block, stop := rep.text, map[string]any{"type": "text", "text": ""}, "end_turn"
	if rep.bash != "" && !hasBash {
		text = "ok"
	}
	var delta map[string]any
	if rep.bash != "" && hasBash {
		input := map[string]string{"command": rep.bash, "description": "run the prompt's command"}
		args, _ := json.Marshal(input)
		block = map[string]any{"type": "tool_use", "id": "toolu_fake_1", "name": "Bash", "input": map[string]any{}}
		delta = map[string]any{"type": "input_json_delta", "partial_json": string(args)}
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		msg["content"] = []any{map[string]any{"type": "text", "text": text}}
		msg["stop_reason"] = "end_turn"
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	if delta == nil {
		delta = map[string]any{"type": "text_delta", "text": text}
	}
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": msg})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// responses answers the OpenAI Responses API, as codex streams it.
func (m *fakeModel) responses(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	prompt, toolResult := "", false
	for i := len(req.Input) - 1; i >= 0; i-- {
		in := req.Input[i]
		if i == len(req.Input)-1 && in.Type == "function_call_output" {
			toolResult = true
		}
		if in.Role == "user" {
			prompt = textOf(in.Content)
			break
		}
	}
	rep := m.decide(r.Context(), "responses", prompt, toolResult, "")
	text := rep.text
	if rep.bash != "" {
		text = "ok"
	}
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_fake"}})
	item := map[string]any{"type": "message", "role": "assistant", "id": "msg_fake", "content": []any{map[string]any{"type": "output_text", "text": text}}}
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "msg_fake", "delta": text})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_fake",
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 1, "output_tokens_details": nil, "total_tokens": 11}}})
}

// geminiContent is one turn of Gemini's generateContent request.
type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text             string          `json:"text"`
		FunctionResponse json.RawMessage `json:"functionResponse"`
	} `json:"parts"`
}

// gemini answers Gemini's API as gemini-cli calls it:
// models/MODEL:streamGenerateContent?alt=sse for a turn, and
// models/MODEL:generateContent for its side requests (the model router's
// classifier, which wants JSON), which are answered at once and not held.
func (m *fakeModel) gemini(w http.ResponseWriter, r *http.Request) {
	_, method, _ := strings.Cut(r.URL.Path, ":")
	if method == "countTokens" {
		io.WriteString(w, `{"totalTokens":10}`)
		return
	}
	var req struct {
		Contents         []geminiContent `json:"contents"`
		GenerationConfig struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
			ResponseSchema     json.RawMessage `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	gc := req.GenerationConfig
	var rep reply
	if gc.ResponseMimeType == "application/json" || len(gc.ResponseJSONSchema) > 0 || len(gc.ResponseSchema) > 0 {
		m.logf("gemini %s json side request", method)
		rep.text = `{"complexity_reasoning":"fake","complexity_score":10,"next_speaker":"user","reasoning":"fake"}`
	} else {
		prompt, toolResult, toolOut := "", false, ""
		if n := len(req.Contents); n > 0 {
			for _, p := range req.Contents[n-1].Parts {
				if len(p.FunctionResponse) > 0 {
					toolResult = true
					toolOut += string(p.FunctionResponse)
				}
			}
			for i := n - 1; i >= 0; i-- {
				if c := req.Contents[i]; c.Role == "user" {
					for _, p := range c.Parts {
						prompt += p.Text
					}
					if prompt != "" {
						break
					}
				}
			}
		}
		rep = m.decide(r.Context(), "gemini", prompt, toolResult, toolOut)
	}
	part := map[string]any{"text": rep.text}
	if rep.bash != "" {
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]string{"command": rep.bash}}}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP"}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
		"modelVersion":  "fake-model",
	}
	if method == "streamGenerateContent" {
		startSSE(w)
		sse(w, "", resp)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}
