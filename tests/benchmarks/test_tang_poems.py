"""benchmarks.tang_poems: texts joined from poems, and one-line errors."""

import json
import subprocess

import pytest

from benchmarks.tang_poems import main, texts


def test_the_most_prolific_poets_poems_are_joined_into_texts():
    poems = {
        "李白": ["床前明月光", "疑是地上霜", "舉頭望明月"],
        "杜甫": ["國破山河在"],
        "王維": ["空山"],
    }
    rows = texts(poems, authors=2, per_author=1, min_chars=10)
    assert rows == [{"id": "李白-0", "author": "李白", "text": "床前明月光疑是地上霜"}]
    # a poet whose poems never reach min_chars gives no text; per_author caps the rest
    assert [r["id"] for r in texts(poems, 3, 5, 5)] == ["李白-0", "李白-1", "李白-2", "杜甫-0"]


def test_builds_from_a_checkout_and_says_what_is_wrong_in_one_line(tmp_path, capsys):
    repo = tmp_path / "poetry"
    (repo / "全唐诗").mkdir(parents=True)
    poems = [{"author": "李白", "paragraphs": ["床前明月光，", "疑是地上霜。"], "title": "t"}]
    (repo / "全唐诗" / "poet.tang.0.json").write_text(json.dumps(poems), encoding="utf-8")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t",
                                               "commit", "-qm", "poems"]):  # fmt: skip
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    assert main([str(repo), str(tmp_path / "out"), "--min-chars", "5"]) == 0
    rows = [json.loads(line) for line in open(tmp_path / "out" / "texts.jsonl", encoding="utf-8")]
    assert rows == [{"id": "李白-0", "author": "李白", "text": "床前明月光，疑是地上霜。"}]
    assert "chinese-poetry/chinese-poetry at " in (tmp_path / "out" / "SOURCE.md").read_text()
    with pytest.raises(SystemExit, match=r"^error: git ls-tree in .*nowhere: "):
        main([str(tmp_path / "nowhere"), str(tmp_path / "out2")])
    with pytest.raises(SystemExit):
        main([str(repo), str(tmp_path / "out3"), "--authors", "0"])
    assert "--authors must be >= 1, got 0" in capsys.readouterr().err
