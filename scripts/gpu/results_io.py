"""Reading results files in the device-session summaries: a document, and a benchmark metric's
median per "<benchmark id>:<metric>"."""
import json


def load(path):
    """The JSON document at `path`, or None (with a line saying why)."""
    try:
        return json.load(open(path))
    except Exception as e:  # a run that failed leaves no file or half of one
        print(f"{path}: {e}")
        return None


def medians(doc):
    """{"<benchmark id>:<metric>": median} of a results document."""
    out = {}
    for b in doc.get("benchmarks", []):
        for m in b.get("metrics", []):
            s = m.get("summary") or {}
            if "median" in s:
                out[f"{b['id']}:{m['name']}"] = s["median"]
    return out
