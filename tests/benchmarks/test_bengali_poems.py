"""benchmarks.bengali_poems: poems cut and joined into texts, and one-line errors."""

import json
import subprocess

import pytest

from benchmarks.bengali_poems import cut, main, texts


def test_long_poems_are_cut_at_line_breaks():
    assert cut("ab\ncd\nef", 5) == ["ab\ncd", "ef"]
    assert cut("abcdefg", 3) == ["abc", "def", "g"]  # a line longer than the limit
    assert cut("ab", 5) == ["ab"]


def test_poets_with_enough_texts_are_kept_most_characters_first():
    poems = {"ক": ["কখগ", "ঘঙ", "চছজ"], "খ": ["অআ", "ইঈউ"], "গ": ["এ"]}
    rows = texts(poems, authors=1, per_author=5, min_chars=2, max_chars=10, min_texts=2)
    assert [r["id"] for r in rows] == ["ক-0", "ক-1", "ক-2"]
    # "খ" reaches two texts as well; "গ" none (a remainder shorter than min_chars)
    rows = texts(poems, authors=3, per_author=5, min_chars=2, max_chars=10, min_texts=2)
    assert sorted({r["author"] for r in rows}) == ["ক", "খ"]


def test_builds_from_a_checkout_and_says_what_is_wrong_in_one_line(tmp_path, capsys):
    repo = tmp_path / "poems"
    files = {
        "dataset/কবি/এক/এক.txt": "আমার সোনার বাংলা\nআমি তোমায় ভালোবাসি।",
        "dataset/কবি/এক/SOURCE.txt": "https://example.org",
        "dataset/কবি/দুই/দুই.txt": "আমার সোনার বাংলা\nআমি তোমায় ভালোবাসি।",  # a second copy
        "dataset/কবি/তিন/তিন.txt": "চিরদিন তোমার আকাশ",
        "dataset/পাবলো নেরুদা/চার/চার.txt": "অনুবাদ করা কবিতা",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t",
                                               "commit", "-qm", "poems"]):  # fmt: skip
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    out = tmp_path / "out"
    assert main([str(repo), str(out), "--min-chars", "10", "--min-texts", "1"]) == 0
    rows = [json.loads(line) for line in open(out / "texts.jsonl", encoding="utf-8")]
    assert rows == [
        {"id": "কবি-0", "author": "কবি", "text": files["dataset/কবি/এক/এক.txt"]},
        {"id": "কবি-1", "author": "কবি", "text": "চিরদিন তোমার আকাশ"},
    ]
    assert "shuhanmirza/Bengali-Poem-Dataset at " in (out / "SOURCE.md").read_text()
    with pytest.raises(SystemExit, match=r"^error: git ls-tree in .*nowhere: "):
        main([str(tmp_path / "nowhere"), str(tmp_path / "out2")])
    with pytest.raises(SystemExit):
        main([str(repo), str(tmp_path / "out3"), "--max-chars", "0"])
    assert "--max-chars must be >= 1, got 0" in capsys.readouterr().err
