"""benchmarks.rekhta_ghazals: Devanagari ghazals from the zip in a checkout, one-line errors."""

import io
import json
import subprocess
import zipfile

import pytest

from benchmarks.rekhta_ghazals import main


def _commit(repo, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t",
                                               "commit", "-qm", "ghazals"]):  # fmt: skip
        subprocess.run(["git", "-C", str(repo), *args], check=True)


def _zip(entries: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in entries.items():
            z.writestr(name, text)
    return buf.getvalue()


def test_builds_from_the_zip_in_a_checkout_and_says_what_is_wrong_in_one_line(tmp_path, capsys):
    ghazal = "दिल-ए-नादाँ तुझे हुआ क्या है\nआख़िर इस दर्द की दवा क्या है"
    entries = {
        "dataset/mirza-ghalib/hi/dil-e-nadan": ghazal,
        "dataset/mirza-ghalib/hi/copy": ghazal,  # a second copy: left out
        "dataset/mirza-ghalib/hi/hum-ko-malum": "हम को मालूम है जन्नत की हक़ीक़त लेकिन",
        "dataset/mirza-ghalib/ur/dil-e-nadan": "دل ناداں تجھے ہوا کیا ہے",
        "dataset/mirza-ghalib/en/dil-e-nadan": "dil-e-nadan tujhe hua kya hai",
    }
    repo = tmp_path / "rekhta"
    _commit(repo, {"dataset/dataset.zip": _zip(entries)})
    out = tmp_path / "out"
    assert main([str(repo), str(out), "--min-chars", "30", "--min-texts", "1"]) == 0
    rows = [json.loads(line) for line in open(out / "texts.jsonl", encoding="utf-8")]
    # in name order: "copy" is read first and keeps the text, "dil-e-nadan" is its second copy
    assert rows == [
        {"id": "mirza-ghalib-0", "author": "mirza-ghalib", "text": ghazal},
        {"id": "mirza-ghalib-1", "author": "mirza-ghalib", "text": entries[
            "dataset/mirza-ghalib/hi/hum-ko-malum"]},
    ]  # fmt: skip
    assert "amir9ume/urdu_ghazals_rekhta at " in (out / "SOURCE.md").read_text()

    broken = tmp_path / "broken"
    _commit(broken, {"dataset/dataset.zip": b"not a zip"})
    with pytest.raises(SystemExit, match=r"dataset\.zip is not a zip archive"):
        main([str(broken), str(tmp_path / "out2")])
    empty = tmp_path / "empty"
    _commit(empty, {"README.md": b"no data"})
    with pytest.raises(SystemExit, match=r"^error: git cat-file in .*: cannot read HEAD:dataset"):
        main([str(empty), str(tmp_path / "out3")])
    with pytest.raises(SystemExit):
        main([str(repo), str(tmp_path / "out4"), "--min-texts", "0"])
    assert "--min-texts must be >= 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit, match=r"^error: no text reaches the sizes asked for"):
        main([str(repo), str(tmp_path / "out5"), "--min-chars", "100000"])
    assert not (tmp_path / "out5").exists()
