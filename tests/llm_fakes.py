"""Test doubles for the LLM tests: a scripted loopback HTTP server and a scripted backend."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from stylo.llm.backend import ChatBackend


def chat_body(
    content: str, finish_reason: str = "stop", prompt_tokens: int = 11, completion_tokens: int = 3
) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ScriptedServer:
    """An OpenAI-style ``/chat/completions`` on 127.0.0.1 answering from a script.

    Each script step is one of ``("json", body)``, ``("status", code, body_text, headers)``,
    ``("raw", bytes)``, ``("sleep", seconds, body)`` or ``("wait", event, body)`` (answers
    once ``event``, a ``threading.Event``, is set: a client timeout driven by the test, not
    by the clock); when the script is empty,
    ``default(request_json)`` answers. Every request (headers, JSON body) is kept in
    ``requests``.
    """

    def __init__(self, default=None):
        self.script: list[tuple] = []
        self.requests: list[dict] = []
        self.default = default or (lambda req: ("json", chat_body('{"same": true}')))
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    req = json.loads(raw)
                except json.JSONDecodeError:
                    req = None
                with outer._lock:
                    outer.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "json": req}
                    )
                    step = outer.script.pop(0) if outer.script else outer.default(req)
                kind = step[0]
                if kind == "sleep":
                    time.sleep(step[1])
                    step = ("json", step[2])
                    kind = "json"
                elif kind == "wait":
                    step[1].wait()
                    step = ("json", step[2])
                    kind = "json"
                if kind == "json":
                    self._send(200, json.dumps(step[1]).encode(), {})
                elif kind == "status":
                    self._send(step[1], step[2].encode(), step[3] if len(step) > 3 else {})
                elif kind == "raw":
                    self._send(200, step[1], {})

            def _send(self, code, payload, headers):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class ScriptedBackend(ChatBackend):
    """A backend whose answers come from ``answer(messages) -> str`` (no model, no network)."""

    kind = "scripted"

    def __init__(self, answer, cache=None, context_window=None, finish_reason="stop"):
        super().__init__(model="scripted", cache=cache, context_window=context_window)
        self.answer = answer
        self.finish_reason = finish_reason

    def _call(self, request):
        text = self.answer(request["messages"])
        return {
            "text": text,
            "finish_reason": self.finish_reason,
            "prompt_tokens": sum(len(m["content"]) // 4 for m in request["messages"]),
            "completion_tokens": len(text) // 4,
        }
