#!/usr/bin/env python3
"""Writes the committed seed corpora (fuzz/seeds/<target>/) from the project's own test data:
engine/tests/data (shell cases, rule policies, the version-1 envelope), ingest/tests/data (one
sample per reader), hook/tests/data (conformance payloads). Third-party datasets stay in
../shared/datasets and are never copied here. Run from the repository root; idempotent."""
import hashlib
import pathlib
import tomllib

root = pathlib.Path(__file__).resolve().parent.parent
seeds = root / "fuzz" / "seeds"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = seeds / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def toml(path):
    return tomllib.loads((root / path).read_text())


# The shell analyser: the tokenizer and parse cases, every fifth, and the bypass corpus's first.
shell = toml("engine/tests/data/shell.toml")
inputs = [case["input"] for section in shell.values() if isinstance(section, list)
          for case in section if isinstance(case, dict) and isinstance(case.get("input"), str)]
for text in inputs[::5][:16]:
    put("shell", text)
put("shell", "#cwd src\ncat ../README.md && cd .. && rm -rf build")

# Structured calls.
for text in [
    'Read\n{"file_path": "/home/dev/proj/src/lib.rs"}',
    'Write\n{"file_path": "/home/dev/.bashrc", "content": "x"}',
    'mcp__github__create_issue\n{"owner": "o", "repo": "r", "title": "t"}',
    'apply_patch\n{"input": "*** Begin Patch\\n*** Update File: a.txt\\n@@\\n-a\\n+b\\n*** End Patch"}',
    'run_shell_command\n{"command": "ls -la", "directory": "src"}',
]:
    put("tool_call", text)

# Every reader: its selector byte (fuzz_targets/readers.rs, SOURCES) then a real sample.
SEP = b"\n%%FILE%%\n"
data = root / "ingest" / "tests" / "data"
claude = (b'{"type":"user","sessionId":"s1","cwd":"/w/app","timestamp":"2026-03-01T10:00:00Z","uuid":"u1","message":{"role":"user","content":"hi"}}\n'
          b'{"type":"assistant","sessionId":"s1","cwd":"/w/app","timestamp":"2026-03-01T10:00:01Z","uuid":"u2","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}\n'
          b'{"type":"user","sessionId":"s1","cwd":"/w/app","timestamp":"2026-03-01T10:00:02Z","uuid":"u3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]}}\n')
put("readers", bytes([0]) + claude)
for md in sorted((data / "specstory").rglob("*.md"))[:3]:
    put("readers", bytes([1]) + md.read_bytes())
for rollout in sorted((data / "codex").rglob("*.jsonl"))[:1]:
    put("readers", bytes([2]) + rollout.read_bytes())
copilot = next((data / "copilot").rglob("events.jsonl"))
put("readers", bytes([3]) + copilot.read_bytes()[:6000] + SEP + (copilot.parent / "workspace.yaml").read_bytes())
for chat in sorted((data / "gemini").rglob("*.jsonl"))[:2]:
    put("readers", bytes([4]) + chat.read_bytes())
for chat in sorted((data / "gemini").rglob("*.json"))[:1]:
    if chat.name.startswith("session-"):
        put("readers", bytes([5]) + chat.read_bytes())
put("readers", bytes([6]) + (data / "ledger" / "ledger.jsonl.1").read_bytes() + SEP + (data / "ledger" / "ledger.jsonl").read_bytes())

# The hook: conformance payloads, with their agent's selector byte (Agent::ALL order).
agents = ["claude-code", "cursor", "codex", "copilot", "gemini"]
cases = toml("hook/tests/data/conformance.toml")
picked = {}
for case in next(v for v in cases.values() if isinstance(v, list)):
    agent = case.get("agent", "claude-code")
    if agent in agents and isinstance(case.get("payload"), str) and picked.get(agent, 0) < 3:
        picked[agent] = picked.get(agent, 0) + 1
        put("hook_answer", bytes([agents.index(agent)]) + case["payload"].encode())

# The frozen decoder: the version-1 file as bytes (mode 0), and a few learned histories (mode 1).
put("frozen", bytes([0]) + (root / "engine/tests/data/frozen/v1.lgenv").read_bytes())
for n in range(3):
    put("frozen", bytes([1]) + hashlib.sha256(b"frozen%d" % n).digest() * 8)

# Rules: the carve-out policies of the rules seed file, as JSON.
policies = toml("engine/tests/data/rules/seed.toml")["policy"]
for policy in policies[:8]:
    put("rules", policy["json"])
put("rules", "allow Bash(git status:*)\ndeny Read(~/.ssh/**)\nask Bash(rm *)\nallow Edit(src/**)")

# Containment: pairs of specifiers with their kinds byte.
for kinds, a, b in [(0x09, "git *", "git status:*"), (0x12, "src/**", "src/*.rs"), (0x1b, "*.md", "**"),
                    (0x20, "ls", "ls -la"), (0x0c, "a?c", "[ab]*"), (0x01, "aws * describe-*", "aws:*")]:
    put("diff_containment", bytes([kinds]) + a.encode() + b"\0" + b.encode())

# The replay-against-hook differential: byte strings the targets read as histories.
for n in range(4):
    put("diff_replay_hook", hashlib.sha256(b"history%d" % n).digest() * (4 + n))
