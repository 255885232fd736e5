"""Real third-party files as users bring them: policy exports and skills written for other runtimes (issue 29).

Each is put in place of the template's policies (or, for adopt, in a library folder beside the
workspace), then `frames coldstart` (or `frames adopt`) runs; the file stays (it is the user's;
one frames refuses is replaced by the user's fix), and the normal commands afterwards are `frames validate` and the
same command again, which must
leave skills/ committed and clean.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from hostile.harness import Trial, git, nothing, write

USWDS = (
    '<h1>Travel rules</h1>\n<div class="usa-accordion">\n  <h3 class="usa-accordion__heading">\n'
    '    <button type="button" class="usa-accordion__button" aria-expanded="true" aria-controls="a1">\n'
    "      Booking\n    </button>\n  </h3>\n"
    '  <div id="a1" class="usa-accordion__content"><p>Book travel at least 14 days before the trip.</p></div>\n  <h3 '
    'class="usa-accordion__heading">\n    <button type="button" class="usa-accordion__button" '
    'aria-controls="a2">Lodging</button>\n  </h3>\n  <div id="a2" class="usa-accordion__content"><p>Stay in approved '
    'hotels within the per diem.</p></div>\n</div>\n'
)
CJK = (
    "# 个人信息保护法\n\n"
    + "\n\n".join(
        f"第{n}条 为了规范个人信息处理活动，保护个人信息权益，促进个人信息合理利用，根据宪法，制定本法。"
        "任何组织、个人不得侵害自然人的个人信息权益。"
        for n in range(1, 32)
    )
    + "\n"
)
YAML_IN_PROSE = (
    "# Config\n\nText.\n\n---\nname: example\ndescription: a block shown in prose\n---\n\nMore text about the rules.\n"
)
CLAUDE_SKILL = ("--- \nname: pdf-tools\ndescription: Fill and merge PDF forms with the bundled scripts.\n"
                "allowed-tools: [Bash, Read]\n---  \n# PDF tools\n\nUse scripts/fill.py.\n")
CRLF_SKILL = ("---\r\nname: crlf-skill\r\ndescription: A skill saved on Windows with CRLF line ends.\r\n---\r\n# "
              "CRLF\r\n\r\nKeep the line ends.\r\n")
TAB_SKILL = "---\nname: tabbed\ndescription:\tA description after a tab.\nmetadata:\n\tversion: 2\n---\n# Tabs\n"


def _policy(name: str, data: str | bytes) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        shutil.rmtree(root / "policies")
        shutil.rmtree(root / "skills")
        write(root, f"policies/{name}", data)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"policy {name}")
    return make


def _fixed(name: str) -> Callable[[Path], None]:
    """The user's fix of a refused policy: the file replaced by plain Markdown under a plain name."""
    def fix(root: Path) -> None:
        (root / "policies" / name).unlink()
        write(root, "policies/fixed.md", "# Rules\n\nBook travel early.\n")
    return fix


#: Policies frames refuses (exit 2, naming the file): the user fixes them before the normal run.
REFUSED = ("notepad-utf16.md", "yaml-in-prose.md", "newline\nin-name.md")


def _library(folder: str, text: str) -> Callable[[Path], None]:
    return lambda root: write(root.parent, f"library/{folder}/SKILL.md", text)


def trials() -> list[Trial]:
    """Policies and skills from outside frames."""
    policy_cases = {
        "uswds-accordion.html": USWDS,
        "pipl-zh.md": CJK,
        "notepad-utf16.md": "# Règles\n\nRéservez tôt.\n".encode("utf-16"),
        "windows-crlf.md": "# Rules\r\n\r\nBook early.\r\n\r\n## Hotels\r\n\r\nApproved hotels only.\r\n",
        "bom-utf8.md": "\ufeff# Rules\n\nBook early.\n",
        "yaml-in-prose.md": YAML_IN_PROSE,
        "saved-page.html": "<!DOCTYPE html>\n<html><head><title>Travel</title></head><body>\n<h1>Travel</h1>\n<p>Book "
                           "early.</p>\n</body></html>\n",
        "only-front-matter.md": "---\ntitle: Only front matter\n---\n",
        "jekyll-liquid.md": "---\ntitle: Travel\n---\n{% include nav.html %}\n# Travel\n\n{{ site.data.rules }}\nBook "
                            "early.\n",
        "newline\nin-name.md": "# Rules\n\nBook early.\n",
    }
    out = [Trial(f"real-{name.replace(chr(10), '-')}", "real", _policy(name, data), (("coldstart",),),
                 undo=_fixed(name) if name in REFUSED else nothing, normal=(("validate",), ("coldstart",)),
                 clean_skills=True)
           for name, data in policy_cases.items()]
    for folder, text in (("pdf-tools", CLAUDE_SKILL), ("crlf-skill", CRLF_SKILL), ("tabbed", TAB_SKILL)):
        out.append(Trial(f"real-adopt-{folder}", "real", _library(folder, text), (("adopt", "../library"),),
                         undo=nothing, normal=(("validate",), ("adopt", "../library")), clean_skills=True))
    return out
