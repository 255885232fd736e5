"""A small command agent for tests: behaves by case id and logs what it received.

crash-*: exits 3 with a message on stderr; slow-*: sleeps 30 s; garbage-*: prints non-JSON;
badfield-*: prints JSON whose skills_used is not a list; lost-*: exits 75 (its answer lost) while
$FRAMES_RETRY is below $AGENT_LOST_UNTIL (default: always), then answers; otherwise answers with the value for the
case id in the JSON file $AGENT_ANSWERS (or null), naming every skill folder it sees as used.
Each call's stdin, argv and skills folder listing go to $AGENT_LOG/<case id>-<sample>.json.
"""

import json
import os
import sys
import time
from pathlib import Path

case = json.loads(sys.stdin.read())
skills_dir = Path(sys.argv[-1])
seen = sorted(p.parent.name for p in skills_dir.glob("*/SKILL.md"))
log = os.environ.get("AGENT_LOG")
if log:
    record = {"stdin": case, "argv": sys.argv[1:], "env_skills_dir": os.environ.get("FRAMES_SKILLS_DIR"),
              "skills": seen}
    Path(log, f"{case['id']}-{case['sample']}.json").write_text(json.dumps(record))
cid = case["id"]
if cid.startswith("crash-"):
    print("agent blew up: KeyError 'fields'", file=sys.stderr)
    sys.exit(3)
if cid.startswith("slow-"):
    time.sleep(30)
if cid.startswith("garbage-"):
    print("Sure! Here is my answer: cancel it")
    sys.exit(0)
if cid.startswith("lost-") and int(os.environ["FRAMES_RETRY"]) < int(os.environ.get("AGENT_LOST_UNTIL", "1000")):
    print("provider unavailable", file=sys.stderr)
    sys.exit(75)
if cid.startswith("badfield-"):
    print(json.dumps({"output": 1, "skills_used": "all"}))
    sys.exit(0)
answers = json.loads(Path(os.environ["AGENT_ANSWERS"]).read_text()) if os.environ.get("AGENT_ANSWERS") else {}
print("thinking...")  # noise before the JSON line: the last line counts
print(json.dumps({"output": answers.get(cid), "skills_used": seen,
                  "usage": {"prompt_tokens": 100, "completion_tokens": 7},
                  "trajectory": [{"step": 1, "action": "answer"}]}))
