"""Every `<!-- example -->` Python block of the documents (README.md and the package's guide,
docs/guide/python.md) runs against the installed package, and the output the document shows under
it (the ``` block that follows) is what it prints.

    python -m pytest tests/package/test_readme.py                          # check
    python tests/package/test_readme.py --write docs/guide/python.md       # regenerate the shown outputs
"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(os.environ.get("LEAKGATE_SOURCE") or Path(__file__).resolve().parents[2])
# The documents that hold examples: the README may show one, the package's guide holds the rest.
DOCUMENTS = [SOURCE / "README.md", SOURCE / "docs" / "guide" / "python.md"]
# An example block, then optionally the block with its output.
EXAMPLE = re.compile(r"<!-- example -->\n```python\n(?P<code>.*?)```\n(?:\n```\n(?P<output>.*?)```\n)?",
                     re.S)


def masked(text):
    return re.sub(r"[0-9]+(\.[0-9]+)?", "N", text)


def run(code):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "example.py")
        with open(path, "w") as f:
            f.write(code)
        done = subprocess.run([sys.executable, "example.py"], cwd=directory, capture_output=True,
                              text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_example_runs_and_prints_what_the_document_shows():
    examples = [(document.name, example) for document in DOCUMENTS
                for example in EXAMPLE.finditer(document.read_text())]
    assert len(examples) >= 3
    for name, example in examples:
        printed = run(example["code"])
        if example["output"] is not None:  # byte counts differ between Python versions
            assert masked(printed) == masked(example["output"]), f"{name}:\n{printed}"


def write(path):
    text = Path(path).read_text()

    def regenerate(example):
        return f"<!-- example -->\n```python\n{example['code']}```\n\n```\n{run(example['code'])}```\n"

    Path(path).write_text(EXAMPLE.sub(regenerate, text))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        write(sys.argv[2])
    else:
        sys.exit("usage: test_readme.py --write docs/guide/python.md")
