import json
import pathlib

import pytest

CORPUS = pathlib.Path(__file__).parent


def corpus_files():
    return sorted(CORPUS.glob("*.hlo"))


def manifest():
    path = CORPUS / "MANIFEST.json"
    return json.loads(path.read_text()) if path.exists() else []


@pytest.fixture
def corpus_dir():
    return CORPUS
