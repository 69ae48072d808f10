"""ClinicalBLEURT training pieces: metrics, the group split, and the BLEURT checkpoint converter."""

import json
import logging
import math

import pytest
import torch
import torch.nn.functional as F

from data.ratings import RatedPair
from train.bleurt.convert import bleurt_folder, convert, load_regressor, load_tokenizer
from train.bleurt.data import split_by_group
from train.bleurt.metrics import regression_metrics


# -- metrics -------------------------------------------------------------------------------------
def test_regression_metrics_on_hand_made_values(caplog):
    m = regression_metrics([0.1, 0.2, 0.3, 0.4], [0.2, 0.4, 0.6, 0.8])
    assert m["pearson"] == pytest.approx(1.0) and m["kendall"] == pytest.approx(1.0)
    assert m["mse"] == pytest.approx((0.01 + 0.04 + 0.09 + 0.16) / 4) and m["n"] == 4
    m = regression_metrics([3, 2, 1, 0], [0.0, 0.5, 0.7, 1.0])
    assert m["kendall"] == pytest.approx(-1.0) and m["pearson"] < -0.9
    m = regression_metrics([1, 2, 3, 4], [1, 3, 2, 4])  # one discordant pair of six
    assert m["kendall"] == pytest.approx((5 - 1) / 6) and m["pearson"] == pytest.approx(0.8)
    with caplog.at_level(logging.WARNING):
        m = regression_metrics([0.5, 0.5, 0.5], [0.1, 0.2, 0.9])
    assert (m["pearson"], m["kendall"]) == (0.0, 0.0) and "correlation undefined" in caplog.text
    with pytest.raises(ValueError, match="must be 1-D and equal"):
        regression_metrics([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="no predictions"):
        regression_metrics([], [])


# -- group split ---------------------------------------------------------------------------------
def _pairs(n_groups, per_group=3):
    return [RatedPair(f"{g}-{k}", f"ref {g}", f"cand {k}", k / 3, f"g{g}")
            for g in range(n_groups) for k in range(per_group)]


def test_split_by_group_never_shares_a_reference_and_keeps_every_row():
    pairs = _pairs(40)
    splits = split_by_group(pairs, {"train": 0.8, "val": 0.1, "test": 0.1}, seed=0)
    groups = {name: {p.group for p in rows} for name, rows in splits.items()}
    assert not (groups["train"] & groups["val"] or groups["train"] & groups["test"] or groups["val"] & groups["test"])
    assert sorted(p.id for rows in splits.values() for p in rows) == sorted(p.id for p in pairs)
    assert [len(groups[n]) for n in ("train", "val", "test")] == [32, 4, 4]
    assert splits == split_by_group(list(pairs), {"train": 0.8, "val": 0.1, "test": 0.1}, seed=0)
    assert splits != split_by_group(pairs, {"train": 0.8, "val": 0.1, "test": 0.1}, seed=1)
    ids = [p.id for p in splits["train"]]
    assert ids == sorted(ids, key=[p.id for p in pairs].index)  # file order kept
    tiny = split_by_group(_pairs(3), {"train": 0.98, "val": 0.01, "test": 0.01}, seed=0)
    assert all(len(rows) == 3 for rows in tiny.values())  # one group each at least
    with pytest.raises(ValueError, match="2 reference groups cannot fill the 3 splits"):
        split_by_group(_pairs(2), {"train": 0.8, "val": 0.1, "test": 0.1}, seed=0)


# -- BLEURT checkpoints (bleurt-pytorch layout) ----------------------------------------------------
H, HEADS, INTER, VOCAB, POS = 16, 2, 32, 40, 64


def _tiny_bleurt_checkpoint(folder, embedding_size, file="model.safetensors"):
    """Random weights named as bleurt-pytorch names them, and its config.json."""
    folder.mkdir(parents=True, exist_ok=True)
    e = embedding_size or H
    g = torch.Generator().manual_seed(0)
    rnd = lambda *shape: torch.randn(*shape, generator=g) * 0.2  # noqa: E731
    sd = {"bleurt.embeddings.word_embeddings.weight": rnd(VOCAB, e),
          "bleurt.embeddings.position_embeddings.weight": rnd(POS, e),
          "bleurt.embeddings.token_type_embeddings.weight": rnd(2, e),
          "bleurt.embeddings.LayerNorm.weight": 1 + rnd(e), "bleurt.embeddings.LayerNorm.bias": rnd(e),
          "bleurt.embeddings.position_ids": torch.arange(POS)[None],
          "bleurt.pooler.dense.weight": rnd(H, H), "bleurt.pooler.dense.bias": rnd(H),
          "classifier.weight": rnd(1, H), "classifier.bias": rnd(1)}
    if embedding_size:
        sd["bleurt.encoder.embedding_projection.weight"] = rnd(H, e)
        sd["bleurt.encoder.embedding_projection.bias"] = rnd(H)
    for i in range(2):
        p = f"bleurt.encoder.layer.{i}."
        for name, shape in (("attention.self.query", (H, H)), ("attention.self.key", (H, H)),
                            ("attention.self.value", (H, H)), ("attention.output.dense", (H, H)),
                            ("intermediate.dense", (INTER, H)), ("output.dense", (H, INTER))):
            sd[p + name + ".weight"], sd[p + name + ".bias"] = rnd(*shape), rnd(shape[0])
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            sd[p + name + ".weight"], sd[p + name + ".bias"] = 1 + rnd(H), rnd(H)
    if file.endswith(".safetensors"):
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in sd.items()}, str(folder / file))
    else:
        torch.save(sd, folder / file)
    cfg = {"model_type": "bleurt", "architectures": ["BleurtForSequenceClassification"],
           "vocab_size": VOCAB, "embedding_size": embedding_size, "hidden_size": H, "num_hidden_layers": 2,
           "num_attention_heads": HEADS, "intermediate_size": INTER, "hidden_act": "gelu",
           "max_position_embeddings": POS, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}
    (folder / "config.json").write_text(json.dumps(cfg))
    return sd


def _reference_bleurt_forward(sd, ids, types, mask):
    """BLEURT's computation written out from its definition (BERT layers, optional projection)."""
    w = lambda k: sd[k]  # noqa: E731
    lin = lambda x, k: x @ w(k + ".weight").T + w(k + ".bias")  # noqa: E731
    ln = lambda x, k: F.layer_norm(x, x.shape[-1:], w(k + ".weight"), w(k + ".bias"), 1e-12)  # noqa: E731
    pos = torch.arange(ids.shape[1])
    x = (w("bleurt.embeddings.word_embeddings.weight")[ids] + w("bleurt.embeddings.token_type_embeddings.weight")[types]
         + w("bleurt.embeddings.position_embeddings.weight")[pos])
    x = ln(x, "bleurt.embeddings.LayerNorm")
    if "bleurt.encoder.embedding_projection.weight" in sd:
        x = lin(x, "bleurt.encoder.embedding_projection")
    b, n, d = ids.shape[0], ids.shape[1], H // HEADS
    heads = lambda t: t.view(b, n, HEADS, d).transpose(1, 2)  # noqa: E731
    for i in range(2):
        p = f"bleurt.encoder.layer.{i}."
        q, k, v = (heads(lin(x, p + f"attention.self.{m}")) for m in ("query", "key", "value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + (1 - mask[:, None, None, :].float()) * -1e9
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, H)
        a = ln(lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        x = ln(lin(F.gelu(lin(a, p + "intermediate.dense")), p + "output.dense") + a, p + "output.LayerNorm")
    return lin(torch.tanh(lin(x[:, 0], "bleurt.pooler.dense")), "classifier")


@pytest.mark.parametrize("embedding_size, file, expected_class", [
    (8, "model.safetensors", "RemBertForSequenceClassification"),
    (None, "pytorch_model.bin", "BertForSequenceClassification"),
], ids=["projection", "no-projection"])
def test_converted_bleurt_computes_what_bleurt_computes(tmp_path, embedding_size, file, expected_class):
    sd = _tiny_bleurt_checkpoint(tmp_path / "bleurt", embedding_size, file)
    assert bleurt_folder(str(tmp_path / "bleurt")) == tmp_path / "bleurt"
    model = load_regressor(str(tmp_path / "bleurt")).eval()
    assert type(model).__name__ == expected_class and model.config.num_labels == 1
    ids = torch.tensor([[2, 5, 9, 3, 7, 11, 3], [2, 6, 3, 8, 3, 0, 0]])
    types = torch.tensor([[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0]])
    mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2])
    with torch.no_grad():
        got = model(input_ids=ids, token_type_ids=types, attention_mask=mask).logits
        want = _reference_bleurt_forward(sd, ids, types, mask)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def _tiny_spm(path, pieces):
    """A SentencePiece unigram model file written with protobuf."""
    from transformers.utils import sentencepiece_model_pb2_new as spm_pb2

    proto = spm_pb2.ModelProto()
    for piece, kind in pieces:
        p = proto.pieces.add()
        p.piece, p.score = piece, -float(len(proto.pieces))
        p.type = getattr(spm_pb2.ModelProto.SentencePiece, kind)
    proto.trainer_spec.model_type = spm_pb2.TrainerSpec.UNIGRAM
    path.write_bytes(proto.SerializeToString())


def test_bleurt_sentencepiece_tokenizer_and_the_convert_command(tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from train.__main__ import main

    src = tmp_path / "bleurt"
    _tiny_bleurt_checkpoint(src, 8)
    specials = [("[PAD]", "CONTROL"), ("[UNK]", "UNKNOWN"), ("[CLS]", "CONTROL"), ("[SEP]", "CONTROL"),
                ("[MASK]", "CONTROL")]
    words = [("▁No", "NORMAL"), ("▁effusion", "NORMAL"), ("▁Small", "NORMAL"), (".", "NORMAL")]
    _tiny_spm(src / "spm.model", specials + words)
    tok = load_tokenizer(str(src))
    enc = tok("No effusion.", "Small effusion.")
    assert tok.convert_ids_to_tokens(enc["input_ids"]) == [
        "[CLS]", "▁No", "▁effusion", ".", "[SEP]", "▁Small", "▁effusion", ".", "[SEP]"]
    assert enc["input_ids"][:4] == [2, 5, 6, 8] and enc["token_type_ids"] == [0] * 5 + [1] * 4
    assert tok.pad_token_id == 0 and tok.convert_tokens_to_ids("[UNK]") == 1

    out = tmp_path / "converted"
    assert main(["bleurt-convert", str(src), "--out", str(out)]) == 0
    assert (out / "model.safetensors").is_file()
    reloaded = AutoModelForSequenceClassification.from_pretrained(out).eval()
    assert AutoTokenizer.from_pretrained(out)("No effusion.")["input_ids"] == tok("No effusion.")["input_ids"]
    direct = load_regressor(str(src)).eval()
    ids = torch.tensor([enc["input_ids"]])
    with torch.no_grad():
        torch.testing.assert_close(reloaded(input_ids=ids).logits, direct(input_ids=ids).logits)
    with pytest.raises(ValueError, match="not a BLEURT"):
        convert(str(out), tmp_path / "again")
    (src / "config.json").write_text(json.dumps({**json.loads((src / "config.json").read_text()),
                                                 "num_hidden_layers": 3}))
    with pytest.raises(ValueError, match=r"missing \['rembert.encoder.layer.2"):
        load_regressor(str(src))
