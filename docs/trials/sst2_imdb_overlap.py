"""How many SST-2 dev sentences occur verbatim in the in-domain pre-training text (IMDB unsup + train reviews)?

Both sides are normalised the way PROVENANCE.md describes (lowercase, non-alphanumeric characters deleted,
whitespace collapsed); a dev sentence counts when its normalised form occurs in a normalised review as whole words
(``verbatim_in_reviews``) or as any substring (``as_any_substring``, PROVENANCE.md's count).
Run: python docs/trials/sst2_imdb_overlap.py  (about a minute on a 2-core CPU)
"""

import json
import re

from coursekit import data


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", "", text.lower()).split())


reviews = list(data.load_imdb("unsup")["text"]) + list(data.load_imdb("train")["text"])
haystack = " \n " + " \n ".join(normalise(r) for r in reviews) + " \n "     # word boundaries on both sides
dev = list(data.load_sst2()["validation"]["sentence"])
hits = [s for s in dev if normalise(s) and f" {normalise(s)} " in haystack]        # whole words
loose = [s for s in dev if normalise(s) and normalise(s) in haystack]              # any substring (PROVENANCE.md)
print(json.dumps({"dev_sentences": len(dev), "reviews": len(reviews), "verbatim_in_reviews": len(hits),
                  "as_any_substring": len(loose),
                  "longest_hit_words": max((len(s.split()) for s in hits), default=0), "hits": hits}, indent=1))
