"""A command agent for the Ray backend's tests: answers by case id, and can kill the Ray worker running it.

crash-*: exits 3; lost-*: exits 75 (answer lost) on the first try, then answers; kill-*: on its
first run (no file at the path in its input field `marker`) writes that file and kills its parent
process (the Ray worker that started it) with SIGKILL. Otherwise the answer is "yes" for an even
number at the end of the id, "no" for an odd one; skills_used lists the skill folders it sees.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

case = json.loads(sys.stdin.read())
cid = case["id"]
seen = sorted(p.parent.name for p in Path(sys.argv[-1]).glob("*/SKILL.md"))
if cid.startswith("crash-"):
    sys.exit(3)
if cid.startswith("lost-") and os.environ["FRAMES_RETRY"] == "0":
    sys.exit(75)
marker = case["input"]["fields"].get("marker")
if cid.startswith("kill-") and marker and not Path(marker).exists():
    Path(marker).write_text(str(os.getppid()))
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(5)
answer = "yes" if int(cid.rsplit("-", 1)[1]) % 2 == 0 else "no"
print(json.dumps({"output": answer, "skills_used": seen,
                  "usage": {"prompt_tokens": 10 + len(cid), "completion_tokens": 1}}))
