"""generate-er2 against a small chat-completions server on 127.0.0.1: valid, malformed and
inconsistent replies, re-asks, retries of server errors, the cache and a resumed run."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from data.cli import main as data_main
from data.er2_generate import ER2Generator, ReplyError, parse_reply, read_references, reply_schema
from data.ratings import er2_pairs, read_er2_jsonl
from radscore.systems import MRSCORE, RADCLIQ


def radcliq_reply(reference: str, errors: dict, total=None) -> str:
    subs = {k: errors.get(k, 0) for k in RADCLIQ.items}
    return json.dumps({"candidate": f"Candidate of: {reference[:20]}",
                       "subscores": subs, "total": sum(subs.values()) if total is None else total})


class ChatServer:
    """Speaks POST /v1/chat/completions; ``script(request json, call number)`` returns
    ``(status, reply text)``. Records every request."""

    def __init__(self, script):
        self.script, self.requests = script, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body})
                status, text = server.script(body, len(server.requests))
                if status == 200:
                    payload = {"id": f"c{len(server.requests)}", "object": "chat.completion", "created": 0,
                               "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                else:
                    payload = {"error": {"message": text, "type": "server_error"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def tier_of_request(body) -> tuple[int, int]:
    prompt = body["messages"][1]["content"]
    for lo, hi in RADCLIQ.tiers:
        if f"total is between {lo:g} and {hi:g}" in prompt:
            return int(lo), int(hi)
    raise AssertionError("no tier in the prompt")


def reference_of(body) -> str:
    return body["messages"][1]["content"].split("Ground-truth report:\n", 1)[1].split("\n", 1)[0]


def good_reply(body, n) -> tuple[int, str]:
    lo, _ = tier_of_request(body)
    return 200, radcliq_reply(reference_of(body), {"omission": lo})


@pytest.fixture
def refs(tmp_path):
    path = tmp_path / "refs.jsonl"
    rows = [{"id": f"s{k}", "reference": f"Study {k}: small right pleural effusion. No pneumothorax."} for k in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def cli(refs, out, url, *extra):
    return data_main(["generate-er2", "--system", "radcliq", "--references", str(refs), "--model", "test-llm",
                      "--base-url", url, "--out", str(out), "--backoff", "0.001", *extra])


def test_parse_reply_checks_schema_range_and_total():
    ok = parse_reply(radcliq_reply("r", {"omission": 2, "false_prediction": 1}), RADCLIQ)
    assert ok["total"] == 3 and ok["subscores"]["omission"] == 2
    assert parse_reply("```json\n" + radcliq_reply("r", {}) + "\n```", RADCLIQ)["total"] == 0
    bad = [("not json", "not valid JSON"),
           (radcliq_reply("r", {"omission": 2}, total=5), r"'total' is 5 but the sum of the sub-scores is 2"),
           (radcliq_reply("r", {"omission": -1}), "outside"),
           (radcliq_reply("r", {"omission": 1.5}), "whole number"),
           (json.dumps({"candidate": "x", "subscores": {"omission": 1}, "total": 1}), "do not match system"),
           (json.dumps({"candidate": "", "subscores": {}, "total": 0}), "non-empty string"),
           (json.dumps([1]), "JSON object")]
    for text, message in bad:
        with pytest.raises(ReplyError, match=message):
            parse_reply(text, RADCLIQ)
    mr = {k: w for k, w in zip(MRSCORE.items, MRSCORE.weights)}
    assert parse_reply(json.dumps({"candidate": "c", "subscores": mr, "total": 100}), MRSCORE)["total"] == 100
    with pytest.raises(ReplyError, match="must be 0 or 30"):
        parse_reply(json.dumps({"candidate": "c", "subscores": {**mr, "impression_consistency": 12},
                                "total": 82}), MRSCORE)
    schema = reply_schema(MRSCORE)
    assert schema["properties"]["subscores"]["required"] == list(MRSCORE.items)
    assert schema["properties"]["subscores"]["properties"]["grammar"] == {"enum": [0.0, 5.0]}


def test_generate_validates_reasks_and_writes_er2_rows(refs, tmp_path):
    def script(body, n):
        if n == 1:
            return 200, "Sure! Here is the report: {not json"
        if n == 2:  # the re-ask carries the problem; answer with an inconsistent total
            assert "That reply is invalid: the reply is not valid JSON" in body["messages"][-1]["content"]
            return 200, radcliq_reply(reference_of(body), {"omission": 1}, total=4)
        return good_reply(body, n)

    out = tmp_path / "rows.jsonl"
    with ChatServer(script) as server:
        assert cli(refs, out, server.url) == 0
    assert all(r["path"] == "/v1/chat/completions" for r in server.requests)
    assert len(server.requests) == 9 + 2  # 3 references x 3 tiers, plus two re-asks
    rows = read_er2_jsonl(out)
    assert len(rows) == 9 and {r.group for r in rows} == {"s0", "s1", "s2"}
    assert sorted({r.meta["tier_requested"] for r in rows}) == ["0-2", "3-4", "5-6"]
    assert all(r.meta["generated_by"] == "test-llm" for r in rows)
    assert len(er2_pairs(rows)) == 9  # totals 0, 3, 5 per reference: 3 pairs each
    assert not (tmp_path / "rows.jsonl.failed.jsonl").exists()


def test_server_errors_are_retried_and_failures_listed(refs, tmp_path):
    def script(body, n):
        if n in (1, 2):
            return 503, "overloaded"
        if reference_of(body).startswith("Study 1"):
            return 200, "{}"  # always invalid: fails after the re-asks
        return good_reply(body, n)

    out = tmp_path / "rows.jsonl"
    with ChatServer(script) as server:
        assert cli(refs, out, server.url, "--max-reasks", "1") == 1
    failed = [json.loads(x) for x in (tmp_path / "rows.jsonl.failed.jsonl").read_text().splitlines()]
    assert [(f["reference_id"], f["tier_requested"]) for f in failed] == [("s1", "0-2"), ("s1", "3-4"), ("s1", "5-6")]
    assert "after 1 re-asks" in failed[0]["error"]
    assert len(read_er2_jsonl(out)) == 6


def test_a_killed_run_resumes_without_repeating_calls(refs, tmp_path, capsys):
    out = tmp_path / "rows.jsonl"

    def dies_after_four(body, n):  # the server "goes away" after four answers
        return (500, "down") if n > 4 else good_reply(body, n)

    with ChatServer(dies_after_four) as server:
        assert cli(refs, out, server.url, "--retries", "1") == 2
    assert "run the same command again to resume" in capsys.readouterr().err
    first = out.read_text().splitlines()
    assert len(first) == 4
    with out.open("a") as fh:  # and the kill cut the last line in half
        fh.write(first[-1][:25])

    with ChatServer(good_reply) as server:
        assert cli(refs, out, server.url) == 0
    asked = {(reference_of(r["body"]), tier_of_request(r["body"])) for r in server.requests}
    assert len(server.requests) == 5 == len(asked)  # only the 5 items not yet written
    rows = read_er2_jsonl(out)
    assert len(rows) == 9 and len({r.id for r in rows}) == 9
    done_before = {(json.loads(x)["reference"], json.loads(x)["tier_requested"]) for x in first}
    assert not done_before & {(ref, f"{lo}-{hi}") for ref, (lo, hi) in asked}

    # a third run: everything is done, no call at all; the cache also answers a fresh output file
    with ChatServer(good_reply) as server:
        assert cli(refs, out, server.url) == 0
        assert cli(refs, tmp_path / "again.jsonl", server.url, "--cache", str(out) + ".cache") == 0
    assert server.requests == []
    assert len(read_er2_jsonl(tmp_path / "again.jsonl")) == 9


def test_references_and_systems_without_tiers(tmp_path):
    txt = tmp_path / "refs.txt"
    txt.write_text("First report.\n\nSecond report.\n")
    assert [t for _, t in read_references(txt)] == ["First report.", "Second report."]
    txt.write_text("Same.\nSame.\n")
    with pytest.raises(ValueError, match="reference ids repeat"):
        read_references(txt)
    from radscore.systems import ScoringSystem

    with pytest.raises(ValueError, match="defines no quality tiers"):
        ER2Generator(ScoringSystem("x", ("a",), None, False), "m", client=object())
