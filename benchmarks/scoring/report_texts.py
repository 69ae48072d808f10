"""Seeded random report-like texts for sentence-splitter comparisons (``tests/radscore/test_rush.py``,
``benchmarks/scoring/bench_splitter.py``).

They are not meant to read well but to hit what splitters trip on: section headers with colons
(``FINDINGS:``, ``IMPRESSION:``), numbered and bulleted lists (``1.``, ``2)``, ``(a)``, ``-``,
``*``, ``•``), abbreviations (``Dr.``, ``e.g.``, ``vs.``, ``b.i.d.``), decimals and measurements
(``3.5 cm``, ``1.2 x 3.4 cm``), dates and times, de-identification placeholders (``___``),
parentheses and quotes, line breaks of every kind (``\\n``, blank lines, ``\\r\\n``, tabs,
trailing and leading spaces), lower-cased or upper-cased reports, "tokenised" reports with spaces
around punctuation (``clear .``), runs of punctuation (``**``, ``...``, ``--``) and non-ASCII
characters (``°``, ``×``, ``µ``, ``–``, ``é``, no-break space).
"""

from __future__ import annotations

import random

HEADERS = ["FINDINGS:", "IMPRESSION:", "INDICATION:", "COMPARISON:", "TECHNIQUE:", "HISTORY:", "EXAMINATION:",
           "CLINICAL HISTORY:", "FINAL REPORT", "WET READ:", "Findings:", "Impression:", "Conclusion:",
           "NOTIFICATION:", "RECOMMENDATION(S):", "REASON FOR EXAMINATION:", "EXAM: CHEST (PA AND LAT)",
           "Technique -", "IMPRESSION :", "FINDINGS :"]
SUBJECTS = ["the lungs", "heart size", "the cardiomediastinal silhouette", "a small left pleural effusion",
            "the endotracheal tube", "right lower lobe opacity", "the osseous structures", "a 3.5 cm mass",
            "no pneumothorax", "the liver", "mild bibasilar atelectasis", "the aorta", "an NG tube",
            "a 1.2 x 3.4 cm nodule", "the left kidney", "T2-hyperintense signal", "the C5-C6 disc",
            "degenerative change", "s/p CABG changes", "a well-defined lesion", "the PICC line",
            "hilar contours", "the right IJ catheter", "diffuse osteopenia", "the spleen (13 cm)",
            "a 5 mm T2-hyperintense focus", "Pulmonary vascularity", "Dr. ___", "the ___ catheter",
            "a rounded opacity at 3 o'clock", "the stomach", "No acute fracture", "ICD leads", "CT",
            "MRI of June 2023", "PA and lateral views", "an 8-mm nodule", "the prior exam of ___"]
PREDICATES = ["are clear", "is normal", "is unchanged", "has increased", "is stable", "is noted",
              "terminates 4 cm above the carina", "is within normal limits", "measures 2.3 cm",
              "is again seen", "was discussed with Dr. ___ at 10:45 on ___", "persists", "resolved",
              "is present, e.g. at the base", "vs. atelectasis", "is seen (series 3, image 45)",
              "is consistent with pneumonia", "appears mildly enlarged", "is approx. 12 mm",
              "is new since 12/03/2019", "measures 45% of the thoracic diameter", "is unremarkable",
              "is favored to represent atelectasis, i.e. not pneumonia", "is 37.5 °C", "is 3 × 4 mm",
              "contains 10 µg", "shows the \"bat-wing\" sign", "is seen – likely benign", "is près",
              "is noted on image 2/45", "+/- edema", "was seen by Mr. ___", "no. 3", "(arrow)",
              "shows NO change", "is b.i.d.", "measures 1.0 cm (previously 0.8 cm)", "is 2+"]
TAILS = ["", "", "", " bilaterally", " on the left", " compared with yesterday", " since ___",
         " (see above)", " as before", ", unchanged", " and the right", " without effusion",
         ", likely atelectasis", " in the interval", " at the level of T11", " per Dr. ___"]
ENDINGS = [".", ".", ".", ".", "", "", "!", "?", ":", ";", "..", " .", "...", ".)", ")."]
MARKERS = ["", "", "", "", "1. ", "2. ", "3) ", "10. ", "(a) ", "- ", "* ", "• ", "#1 ", "1.", "2)", "a. ",
           "-", "** ", "1 - ", "(1) ", "A. ", "IV. "]
JOINS = [" ", " ", " ", " ", "  ", "\n", "\n", "\n\n", "\r\n", " \n", "\n ", "\n\n\n", "\t", " \n\n ",
         "\n\u00a0", "\u00a0", "\r\n\r\n", "   "]
JUNK = ["**", "___", "...", "--", "==", "#", "____________", "***", "*", "-", "\"", "'", "[**]", "// ", "ok"]


def _sentence(rng: random.Random) -> str:
    s = f"{rng.choice(SUBJECTS)} {rng.choice(PREDICATES)}{rng.choice(TAILS)}"
    if rng.random() < 0.3:
        s += f", {rng.choice(SUBJECTS)} {rng.choice(PREDICATES)}"
    if rng.random() < 0.8:
        s = s[0].upper() + s[1:]
    return rng.choice(MARKERS) + s + rng.choice(ENDINGS)


def _tokenised(text: str) -> str:
    """Spaces around punctuation, as in pre-tokenised report corpora ("clear ." , "( arrow )")."""
    out = []
    for i, c in enumerate(text):
        nxt = text[i + 1] if i + 1 < len(text) else " "
        prev = text[i - 1] if i else " "
        if c in ".,:;()" and not (c == "." and prev.isdigit() and nxt.isdigit()):
            out.append(f" {c} ")
        else:
            out.append(c)
    return "".join(out).replace("  ", " ")


def report_text(rng: random.Random) -> str:
    """One random report-like text."""
    parts: list[str] = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.6:
            parts.append(rng.choice(HEADERS))
        for _ in range(rng.randint(0, 5)):
            parts.append(_sentence(rng))
        if rng.random() < 0.15:
            parts.append(rng.choice(JUNK))
    if not parts:
        parts.append(_sentence(rng))
    text = parts[0]
    for p in parts[1:]:
        text += rng.choice(JOINS) + p
    style = rng.random()
    if style < 0.15:
        text = text.lower()
    elif style < 0.22:
        text = text.upper()
    elif style < 0.32:
        text = _tokenised(text)
    if rng.random() < 0.2:
        text = rng.choice(JOINS) + text
    if rng.random() < 0.2:
        text += rng.choice(JOINS + ["  ", " "])
    return text


def report_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` random report-like texts (the same ones for the same seed)."""
    rng = random.Random(seed)
    return [report_text(rng) for _ in range(n)]
