"""The RaTE entity types and the IOB label set, defined once for the whole project.

The order of ``IOB_LABELS`` is the one of the released RaTE-NER dataset and model
(label ids 0..10); an exported IOB checkpoint carries exactly this ``id2label``.
"""

from __future__ import annotations

ENTITY_TYPES: tuple[str, ...] = (
    "ABNORMALITY",
    "NON-ABNORMALITY",
    "DISEASE",
    "NON-DISEASE",
    "ANATOMY",
)

IOB_LABELS: tuple[str, ...] = (
    "B-ABNORMALITY",
    "I-ABNORMALITY",
    "B-NON-ABNORMALITY",
    "I-NON-ABNORMALITY",
    "B-DISEASE",
    "I-DISEASE",
    "B-NON-DISEASE",
    "I-NON-DISEASE",
    "B-ANATOMY",
    "I-ANATOMY",
    "O",
)

ID2LABEL: dict[int, str] = dict(enumerate(IOB_LABELS))
LABEL2ID: dict[str, int] = {label: i for i, label in ID2LABEL.items()}
OUTSIDE = "O"


def entity_type_of(label: str) -> str | None:
    """The entity type of an IOB label (``"B-ANATOMY"`` -> ``"ANATOMY"``), ``None`` for ``O``."""
    if label == OUTSIDE:
        return None
    if label not in LABEL2ID:
        raise ValueError(f"unknown IOB label {label!r}; expected one of {list(IOB_LABELS)}")
    return label[2:]


def check_label_mapping(id2label: dict) -> None:
    """Raise ``ValueError`` unless ``id2label`` is exactly the RaTE label set in SPEC order."""
    got = {int(k): v for k, v in id2label.items()}
    if got != ID2LABEL:
        raise ValueError(
            "the model's id2label is not the RaTE-NER label set in the released order: "
            f"expected {ID2LABEL}, got {got}"
        )
