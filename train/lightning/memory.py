"""GPU memory a training config needs, as a sum of named terms, each from the real model's architecture.

``estimate_training_memory`` returns bytes per term at the config's precision, batch size ``b`` and
sequence length ``s`` (hidden ``h``, ``a`` heads, ``L`` layers, intermediate ``f``, vocabulary ``V``).
No term carries a per-model factor: each counts tensors that exist, and its comment below names
where the count comes from.

Model state (PyTorch / Lightning / AdamW):

- ``weights``: every parameter at the dtype the backbone is loaded in (``model.dtype`` when the
  config sets one, e.g. bf16 for the 7-8B reward backbones; else fp32: Lightning's ``*-mixed``
  precisions keep fp32 weights and autocast the operations); LoRA adapters in fp32 (peft's
  ``autocast_adapter_dtype``), so their gradients and AdamW moments are fp32 too;
- ``autocast_weight_copies``: under ``*-mixed`` with fp32 weights, autocast casts each matmul
  weight to 16-bit and keeps the copy for the whole forward (``torch.autocast``'s weight cast cache)
  and backward (the linear saves it): 2 bytes per linear parameter (``linear_params``: the layers'
  projections and the head; embeddings and norms are not cast);
- ``master_weights``: an fp32 copy of 16-bit trainable weights where a precision keeps one
  (``16-mixed`` with a 16-bit loaded model is not a Lightning mode, so 0 for every mode here; the
  term is listed so that a future ``bf16-true`` + fp32 master-weight optimizer has a place);
- ``gradients``: the trainable parameters, at the weight dtype (``param.grad`` has the param's dtype);
- ``optimizer``: AdamW's ``exp_avg`` and ``exp_avg_sq`` per trainable parameter, at the parameter
  dtype (``torch.optim.AdamW`` allocates them ``zeros_like(param)``): 8 bytes each for fp32 weights.

Activations kept for the backward pass, per layer, counted from what each autograd op saves in
the transformers modelling code (BERT/RemBERT ``BertLayer``, MPNet ``MPNetLayer``, DeBERTa-v2
``DisentangledSelfAttention``, Llama/Qwen2 ``LlamaDecoderLayer``, ``GemmaDecoderLayer``, ``PhiDecoderLayer``;
each family's count is checked against autograd's saved tensors on tiny models in
``tests/train/test_memory.py``) — the same bookkeeping as Korthikanti et al. 2022 ("Reducing Activation
Recomputation in Large Transformer Models", §4.1, ``s·b·h·(34 + 5·a·s/h)`` bytes at 16-bit for
BERT/GPT layers with f = 4h), which this model reproduces for that case, generalised to the
intermediate size, gated MLPs, RMSNorm, grouped KV heads, heads wider than ``h/a`` (Gemma: ``qw`` =
heads · head_dim), SDPA, relative positions, Phi's parallel block, frozen (LoRA) linears and mixed
precision. ``e`` is the bytes of a 16/32-bit activation (2 under ``*-mixed`` /
16-bit weights, else 4), ``r`` the residual stream's bytes (fp32 under ``*-mixed`` with fp32
weights: the residual add promotes bf16 + fp32 to fp32), ``m`` a dropout mask's bytes (1 on CUDA:
``native_dropout`` keeps a bool mask; on the CPU ``at::dropout`` multiplies by a noise tensor of the
input's dtype, so ``e`` or ``r``). Autocast's op lists differ by device: CUDA runs ``softmax``, ``pow`` and
``layer_norm`` in fp32, the CPU none of these, so a LayerNorm family with 16-bit weights (Phi-2 in the
reward configs) saves fp32 norm inputs only on CUDA:

- ``attention_block``: the QKV projections' input (``e·sbh``; one storage for the three; under
  ``*-mixed`` with fp32 weights the norm output is fp32 — autocast runs ``layer_norm`` in fp32, and
  Llama's RMSNorm multiplies fp32 tensors — so each of Q, K, V saves its own 16-bit cast, and the
  gated MLP's gate and up projections likewise), Q and K for
  ``QKᵀ``, V for ``PV`` (grouped KV heads: eager attention saves the ``repeat_kv`` copies, ``sbh``
  each; SDPA saves K and V unrepeated, ``sbh·kv/a``), the output projection's input (``e·sbh``) and,
  for SDPA, its log-sum-exp (``4·b·a·s``). SDPA (flash / efficient) also saves its output, in the
  query's memory layout: where Q is a transposed view of its projection (BERT, Llama) the model's
  transpose back is free and the output projection reads that storage (counted once, and still
  counted when the projection is frozen); Phi concatenates its partially rotated Q into a new
  contiguous tensor, so its dense layer reads a copy (one more ``e·sbh``);
- ``attention_scores``: where the implementation materialises ``s×s`` scores (eager attention; SDPA's
  math fallback, which the CPU uses when attention dropout is on): the softmax output
  (``4`` bytes under CUDA autocast, which runs softmax in fp32; Llama's eager attention always runs
  softmax in fp32 and saves the 16-bit cast for ``PV`` too), the dropout mask and the dropped
  probabilities (``e``) per head, ``b·a·s²`` elements each (the CPU math SDPA upcasts 16-bit Q, K, V
  and computes these in fp32); flash / memory-efficient SDPA keeps none;
- ``relative_positions`` (DeBERTa-v2/v3, ``disentangled_attention_bias``): over ``2k`` relative
  positions (``k`` = ``position_buckets``, 256 for v3): the c2p and p2c scores before their
  ``gather`` (``torch.gather``'s backward takes its input, so autograd saves the ``b·a × s × 2k``
  ``bmm`` outputs, ``e`` bytes each — with 2k = s = 512 two more s×s tensors per layer), the position keys and queries
  (``share_att_key``: ``key_proj``/``query_proj`` of the relative embeddings, repeated per batch row,
  ``e·b·2k·h`` each) saved by the c2p/p2c ``bmm``, the content key saved again by p2c (the ``QKᵀ``
  one is ``K/scale``, a new tensor), the c2p/p2c ``gather`` indices (``8·s²`` each, expanded views),
  the boolean attention mask of ``masked_fill`` (``b·s²``) and the dropped relative embeddings
  (``2k·h``, value and mask);
- ``mlp``: the up projection's input (``e·sbh``), the activation's input and the down projection's
  input (``e·sbf`` each; gated MLP (Llama's SiLU, Gemma's tanh-GELU): gate output, activation output,
  up output and their product, ``4·e·sbf``; Phi: fc1 reads the norm output the attention reads, and
  ``gelu_new``, written as tensor ops, keeps the input of ``pow``, the ``tanh`` output and both factors
  of its last product (``gelu_tanh_saved``), then fc2's input);
- ``layer_norms``: LayerNorm keeps its input (``r·sbh``) and mean/rstd (``8·b·s``), two per layer (Phi:
  one); Llama's RMSNorm keeps its fp32 input (``4·sbh``), the normalised ``r·sbh`` and rstd (``4·b·s``),
  Gemma's the normalised input in fp32 (it multiplies by ``1 + w`` before the cast);
- ``dropout_masks``: the hidden dropout masks after attention and after the MLP (``m·sbh`` each);
- ``embeddings`` / ``head``: the embedding LayerNorm and dropout (BERT, MPNet, DeBERTa), the int64 ids
  of the lookups (MPNet: also its per-row position ids and the ``s×s`` bucket ids of its relative
  bias), RoPE's cos and sin (decoders: ``2·r·s`` × the rotated width, one pair for all layers), the
  task head's input and the final norm (decoders: the reward head's input at the head's dtype, a
  float32 copy under LoRA, ``radscore.reward_model.trainable_in_float32``), the loss's log-softmax
  over the labels;
- ``span_head``: the PURE span classifier (``SpanHead``; the span NER configs) over every span of up to
  ``max_width`` words, at the worst case of one word per piece (``s - 2`` words, ``W·n - W(W-1)/2``
  spans a row; real rows hold fewer): per span the start/end/width ids, the first linear's 16-bit
  input ``[h_start; h_end; w]``, per MLP layer the ReLU output, dropout mask and the next linear's
  input, and the loss's fp32 log-softmax and target (``span_head_bytes``); the encoder is an
  ``AutoModel``, so ``head`` is 0;
- ``logits``: a vocabulary-sized output (language-model head): ``b·s·V`` logits and their fp32
  log-softmax. No task here has one (token classification, sequence regression, reward heads), so 0
  unless ``Architecture.lm_head``; the vocabulary still counts in ``weights``/``gradients``.

With LoRA (frozen base, ``lora_targets``) a frozen linear saves no input (its input gradient needs
only the weight): only the targeted projections keep the LoRA branch's dropped input (a 16-bit
cast), its mask (peft casts the input to the fp32 adapters first, so the CPU's mask is fp32; CUDA's
one byte) and ``A x`` (rank ``r``), and the MLP keeps only what the activation and the gating product
need. Every layer is counted as one on the gradient's path: the reward model marks the embedding
output as requiring grad (``enable_input_require_grads``, with gradient checkpointing); without it
the first layer of a frozen model keeps less.

Gradient checkpointing (transformers' ``GradientCheckpointingLayer``, non-reentrant): each layer
keeps its input (``checkpointed_layer_inputs``, ``r·sbh`` per layer; DeBERTa's layers also take the
``b×1×s×s`` int64 attention mask, the ``s×s`` relative positions and the relative embeddings) and the
backward pass
recomputes one layer at a time (``checkpoint_recompute``: one layer's activation terms).

The peak is the largest of three phases of a step, in the order of Lightning's automatic
optimisation (``training_step``, ``zero_grad``, ``backward``, ``optimizer.step``):

- ``forward``: the model state, the autocast weight copies, the **last step's gradients** (Lightning
  zeroes them after ``training_step``, not before it), every activation the forward pass keeps (all
  activation terms but ``checkpoint_recompute``) and, with checkpointing, the worst of two moments:
  the top layer's un-saved MLP temporaries (``forward_transient``, ``mlp_transient_bytes``) while the
  head's tensors are not yet made, and the end of the pass;
- ``backward``: the old gradients zeroed, the worst of three moments. The top layer's: the state and
  weight copies, the forward's activations less the head's (released by the head's backward), the
  recomputed layer (``checkpoint_recompute``) and ``backward_transient``, the gradients alive at that
  layer's worst moment (``backward_transient_bytes``: the gradient arriving at the layer and the MLP
  activation's incoming and outgoing gradients; in full fine-tuning also the down projection's
  weight gradient). The span classifier's (span NER): every activation still held, and
  ``span_head_backward``. The end: every gradient made, the activations released;
- ``optimizer_step``: the state, the gradients and ``optimizer_transient``, AdamW's temporaries
  (``optimizer_transient_bytes``: none for the fused kernel the training modules choose).

Activations are counted at the config's ``max_length`` (the worst case). The estimate ignores the
CUDA context (~0.5 GiB), allocator fragmentation, and the attention's backward temporaries
(gradients of the ``s×s`` scores, the scatter of a ``gather``'s gradient), reached after the MLP's
saved tensors are released. ``python -m train memory-probe`` measures each phase's peak beside its
estimate (on the CPU with the profiler's allocation tracking, on CUDA with ``max_memory_allocated``).
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1024 ** 3
DTYPE_BYTES = {"float32": 4, "fp32": 4, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2}
ACTIVATION_TERMS = ("attention_block", "attention_scores", "relative_positions", "mlp", "layer_norms",
                    "dropout_masks", "embeddings", "head", "span_head", "logits", "checkpointed_layer_inputs",
                    "checkpoint_recompute")
FAMILIES = ("bert", "mpnet", "deberta-v2", "llama", "gemma", "phi")
GATED = ("llama", "gemma")  # gated MLP (SiLU / tanh-GELU), RMSNorm, no biases in the MLP
DECODERS = GATED + ("phi",)  # no embedding LayerNorm or dropout; RoPE; a final norm before the head
EAGER_ONLY = ("mpnet", "deberta-v2")  # transformers has no SDPA path for them


@dataclass(frozen=True)
class SpanHead:
    """The PURE span classifier of ``radscore.span_model.SpanClassifierHead``: every span of up to
    ``max_width`` words, ``[h_start; h_end; width embedding]`` into ``mlp_layers`` ReLU layers of
    ``mlp_hidden`` units (dropout after each) and ``classes`` outputs."""

    max_width: int = 8
    width_dim: int = 150
    mlp_hidden: int = 150
    mlp_layers: int = 2
    dropout: bool = True
    classes: int = 6

    def spans(self, words: int) -> int:
        """Spans of at most ``max_width`` words in a row of ``words`` words (``enumerate_spans``)."""
        w = min(self.max_width, words)
        return max(0, w * words - w * (w - 1) // 2)


@dataclass(frozen=True)
class Architecture:
    """What the estimate needs of a transformer. Defaults: a BERT-style encoder layer with f = 4h,
    LayerNorm, GELU, dropout, eager attention (the Korthikanti et al. setting)."""

    hidden: int
    layers: int
    heads: int
    intermediate: int | None = None  # f; None: 4·hidden
    kv_heads: int | None = None  # grouped-query attention; None: heads
    family: str = "bert"  # one of FAMILIES: bert (BERT, RemBERT/BLEURT, RoBERTa) | mpnet | deberta-v2 |
    # llama (Llama, Qwen2) | gemma | phi (see the module doc for what each keeps)
    attention: str = "eager"  # eager | sdpa
    vocab: int = 0
    position_buckets: int = 0  # DeBERTa-v2/v3 relative positions (k); 0: max_relative_positions
    max_relative_positions: int = 512
    hidden_dropout: bool = True  # dropout on the hidden states (BERT/DeBERTa 0.1; Llama none)
    attention_dropout: bool = True  # dropout on the attention probabilities
    num_labels: int = 1  # the task head's outputs
    head: str = "token"  # token (a label per token) | sequence (one output per row) | span (``span``)
    lm_head: bool = False  # a vocabulary-sized output
    head_dim: int | None = None  # per-head width (Gemma-7B: 256 with 16 heads and hidden 3072); None: hidden/heads
    span: SpanHead | None = None  # the span classifier (head == "span")
    rotary_fraction: float = 1.0  # decoders: the share of each head's width that RoPE rotates (Phi-2: 0.4)

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"Architecture.family {self.family!r} is not one of {FAMILIES}")
        if self.family in EAGER_ONLY and self.attention != "eager":
            raise ValueError(f"Architecture: {self.family} runs eager attention only, not {self.attention!r}")
        if (self.head == "span") != (self.span is not None):
            raise ValueError("Architecture: head='span' and a SpanHead go together")

    @property
    def f(self) -> int:
        return self.intermediate or 4 * self.hidden

    @property
    def d(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def qw(self) -> int:
        """Width of the query / attention output (heads · head_dim; the hidden size unless head_dim says otherwise)."""
        return self.heads * self.d

    @property
    def kv(self) -> int:
        return self.kv_heads or self.heads


def precision_bytes(trainer_precision: str | None, model_dtype: str | None) -> tuple[int, int]:
    """(bytes per weight, bytes per activation) for a Lightning precision string and a load dtype."""
    precision = str(trainer_precision or "32-true")
    weight = DTYPE_BYTES.get(str(model_dtype), 4) if model_dtype else (2 if precision in ("bf16-true", "16-true") else 4)
    activation = 2 if ("16" in precision or weight == 2) else 4
    return weight, activation


def linear_params(arch: Architecture) -> int:
    """Parameters of the matmuls autocast casts (the layers' linears and the task head; embeddings
    and norms are not cast): Q (h·qw), O (qw·h), K, V (h·qw·kv/a), the MLP's 2 (gated: 3) h×f
    matrices, biases where the family has them, and the span classifier's MLP."""
    h, f, qw = arch.hidden, arch.f, arch.qw
    gated = arch.family in GATED
    per_layer = (2 + 2 * arch.kv / arch.heads) * h * qw + (3 if gated else 2) * h * f
    if not gated:
        per_layer += qw * (1 + 2 * arch.kv / arch.heads) + h + f + h  # biases of Q, K, V, O, fc1, fc2
    head = (h + 1) * arch.num_labels
    if arch.span is not None:
        sp, width = arch.span, 2 * h + arch.span.width_dim
        head = (width + 1) * sp.mlp_hidden + (sp.mlp_layers - 1) * (sp.mlp_hidden + 1) * sp.mlp_hidden \
            + (sp.mlp_hidden + 1) * sp.classes
    return int(per_layer * arch.layers + head)


def gelu_tanh_saved(e: int, autocast: bool, device: str) -> int:
    """Bytes per element that transformers' ``NewGELUActivation`` (``gelu_new``, Phi-2) keeps:
    ``0.5·x · (1 + tanh(√(2/π)·(x + 0.044715·x³)))`` written as tensor ops saves the input of ``pow``,
    the output of ``tanh``, and both factors of the last product. CUDA autocast runs ``pow`` in fp32
    (its fp32 op list), so from there on the chain is fp32 except ``0.5·x``; the CPU autocast list has
    no ``pow`` and the chain stays at the input's dtype."""
    if autocast and device == "cuda" and e != 4:
        return 4 + 4 + e + 4
    return 4 * e


def _layer_terms(arch: Architecture, b: int, s: int, e: int, r: int, m_h: int, m_a: int, device: str,
                 mixed: bool, lora_targets: tuple[str, ...], lora_rank: int, autocast: bool = False) -> dict[str, float]:
    """Bytes one layer keeps for the backward pass, by term (see the module doc). ``mixed``: autocast
    over fp32 weights; ``autocast``: a ``*-mixed`` precision whatever the weights' dtype."""
    h, a, f, kv, qw = arch.hidden, arch.heads, arch.f, arch.kv, arch.qw
    fam = arch.family
    sbh, sbf, sbq, s2ab = s * b * h, s * b * f, s * b * qw, s * s * a * b
    frozen = bool(lora_targets)
    dh, da = arch.hidden_dropout, arch.attention_dropout

    # peft casts a LoRA branch's input to the adapters' dtype (fp32) before its dropout: the CPU's
    # dropout mask is fp32 then; CUDA keeps a 1-byte mask
    m_lora = 1 if device == "cuda" else 4

    def lora(name: str, width: int = h) -> float:  # peft's lora_dropout(x) (16-bit cast), its mask, and A·x
        if name not in lora_targets:
            return 0
        return e * s * b * width + m_lora * s * b * width + e * s * b * lora_rank

    t = {}
    # QKV input (one storage; saved by trainable linears only), Q, K, V, output projection input
    # under *-mixed the norm output feeding Q, K, V is fp32 (autocast runs layer_norm in fp32; Llama's
    # RMSNorm multiplies fp32 tensors) and each projection saves its own 16-bit cast of it
    # where the norm's output is fp32 (fp32 weights under autocast; a LayerNorm on CUDA under autocast)
    # each projection reading it saves its own 16-bit cast
    ln_in = layer_norm_input_bytes(fam, r, autocast, device)
    casts = 3 if (e != ln_in) else 1
    qkv_in = 0 if frozen else casts * e * sbh
    qkv_in += lora("q_proj") + lora("v_proj") + lora("k_proj")
    eager = arch.attention == "eager"
    math_fallback = not eager and device == "cpu" and da  # CPU SDPA with dropout: math path
    if eager or math_fallback:
        kv_saved = 2 * e * sbq  # repeat_kv copies (eager) or the separate K, V projections (BERT)
        lse = 0
    else:
        kv_saved = 2 * e * sbq * kv // a  # SDPA takes K, V unrepeated (enable_gqa)
        lse = 4 * b * a * s  # flash / efficient attention's log-sum-exp, fp32
    # the output projection's input; SDPA (flash / efficient) saves its output, even when the projection
    # is frozen. The output takes the query's memory layout, so where Q is a transposed view of the
    # projection (BERT, Llama) the model's transpose back is free and the projection reads that same
    # storage; Phi's partial rotary concatenates Q into a new contiguous tensor, so its dense layer
    # reads a copy of its own
    o_in = (0 if frozen and (eager or math_fallback) else e * sbq) + lora("o_proj", qw)
    if fam == "phi" and not (eager or math_fallback) and not frozen:
        o_in += e * sbq
    q_saved = e * sbq
    if math_fallback and e != 4:  # the CPU math SDPA upcasts 16-bit Q, K, V to fp32 (and computes in fp32)
        q_saved, kv_saved = 4 * sbq, 8 * sbq
    t["attention_block"] = qkv_in + q_saved + kv_saved + o_in + lse
    if fam in GATED and eager:
        # eager_attention_forward: softmax(dtype=float32), then .to(query.dtype) for P·V
        t["attention_scores"] = s2ab * (4 + (e if e != 4 else 0) + ((m_a + e) if da else 0))
    elif math_fallback:  # fp32 softmax output, dropout mask (its dtype on the CPU), dropped probabilities
        t["attention_scores"] = s2ab * 4 * 3
    elif eager:
        softmax_b = 4 if (autocast and device == "cuda") else e  # CUDA autocast: softmax in fp32
        t["attention_scores"] = s2ab * (softmax_b + ((m_a + e) if da else 0))
    else:
        t["attention_scores"] = 0
    if fam == "deberta-v2":
        k = arch.position_buckets or arch.max_relative_positions
        rel = 2 * k
        t["relative_positions"] = (2 * e * b * a * s * rel  # c2p/p2c scores before the gather (gather saves its input)
                                   + 2 * e * b * rel * h  # pos_key_layer, pos_query_layer (repeated per row)
                                   + e * sbh  # key_layer saved by the p2c bmm (QKᵀ saves K/scale)
                                   + 2 * 8 * s * s  # c2p/p2c gather indices (int64, expanded views)
                                   + b * s * s  # masked_fill's boolean mask
                                   + (e + m_h) * rel * h)  # pos_dropout(rel_embeddings) and its mask
    else:
        t["relative_positions"] = 0
    if fam in GATED:  # gated MLP: gate out, activation out, up out, product; gate and up cast the input
        mlp = (3 if frozen else 4) * e * sbf + (0 if frozen else (2 if casts > 1 else 1) * e * sbh)
    elif fam == "phi":  # fc1 reads the LayerNorm output the attention reads (its own cast under autocast)
        mlp = gelu_tanh_saved(e, autocast, device) * sbf + (0 if frozen else e * sbf + (e * sbh if casts > 1 else 0))
    else:  # fc1 input, activation input, fc2 input
        mlp = (1 if frozen else 2) * e * sbf + (0 if frozen else e * sbh)
    t["mlp"] = mlp + lora("gate_proj") + lora("up_proj") + lora("down_proj", f) + lora("fc1") + lora("fc2", f)
    if fam == "llama":  # RMSNorm: fp32 input and rstd; the normalised input (residual dtype) if the weight trains
        t["layer_norms"] = 2 * (4 * sbh + 4 * b * s + (0 if frozen else r * sbh))
    elif fam == "gemma":  # Gemma's RMSNorm multiplies by (1 + w) in fp32: the normalised input is fp32
        t["layer_norms"] = 2 * (4 * sbh + 4 * b * s + (0 if frozen else 4 * sbh))
    elif fam == "phi":  # one LayerNorm per layer (attention and MLP in parallel): input, mean, rstd
        t["layer_norms"] = ln_in * sbh + 8 * b * s
    else:  # LayerNorm: input, mean, rstd
        t["layer_norms"] = 2 * (ln_in * sbh + 8 * b * s)
    t["dropout_masks"] = 2 * m_a * sbh if dh else 0  # they drop the 16-bit dense outputs (CPU mask: that dtype)
    return t


def layer_norm_input_bytes(family: str, r: int, autocast: bool, device: str) -> int:
    """Bytes per element of what a LayerNorm saves of its input: the residual stream's dtype, except
    on CUDA under autocast, whose fp32 op list has ``layer_norm`` (an fp32 copy of a 16-bit input; the
    CPU's list has not). RMSNorm families cast to fp32 themselves (see ``layer_norms``)."""
    return 4 if (family not in GATED and autocast and device == "cuda") else r


def span_head_bytes(arch: Architecture, b: int, s: int, e: int, m: int) -> int:
    """What the span classifier keeps for ``b`` rows of ``s`` pieces, at the worst case of one word
    per piece (``s - 2`` words between [CLS] and [SEP]): the start/end gather indices and the width
    ids (int64 each), the first linear's input ``[h_start; h_end; w]`` (16-bit under autocast), per
    MLP layer the ReLU output, the dropout mask and the next linear's input, and the loss's fp32
    log-softmax and int64 targets. ``m``: a dropout mask's bytes (1 on CUDA, the input's dtype on
    the CPU)."""
    sp = arch.span
    rows = b * sp.spans(max(s - 2, 0))
    # ReLU output; with dropout also its mask and output (the next linear's input), else the ReLU output is that input
    per_layer = ((2 * e + m) if sp.dropout else e) * sp.mlp_hidden
    return rows * (3 * 8 + e * (2 * arch.hidden + sp.width_dim) + sp.mlp_layers * per_layer + 4 * sp.classes + 8)


OPTIMIZERS = ("fused", "foreach", "single")


def mlp_transient_bytes(arch: Architecture, b: int, s: int, e: int, r: int, autocast: bool, device: str,
                        forward: bool = False) -> int:
    """The most one layer's MLP holds at once beyond what it saves, in the forward pass without
    saving (a checkpointed layer) and, as gradients, in the backward pass: the layer's normalised
    input or the gradient arriving at its output (``r·sbh``) and, for a gated MLP (``act(gate) · up``)
    and Phi's ``gelu_new`` (whose last operation is a product), three ``sbf`` tensors — forward the
    activation's output, ``up`` and their product; backward the product's incoming gradient and the
    gradients of both factors — at the product's dtype ``p`` (fp32 for Phi under CUDA autocast,
    whose ``pow`` makes the chain fp32; else ``e``); for GELU (BERT, MPNet, DeBERTa) two, the
    activation's input and output (their gradients backward). Phi's forward holds four: Python
    evaluates ``0.5 * x`` first, so it lives beside ``x`` and the chain up to the product. The
    forward also holds what the MLP's output is added to: a Llama-style layer's residual after
    the attention (``r·sbh``), Phi's attention output (``e·sbh``; its residual is the layer input)."""
    sbf, sbh = s * b * arch.f, s * b * arch.hidden
    if arch.family in GATED or arch.family == "phi":
        p = 4 if (arch.family == "phi" and autocast and device == "cuda") else e
        added = (e if arch.family == "phi" else r) * sbh if forward else 0
        return int(r * sbh + added + (4 if arch.family == "phi" and forward else 3) * p * sbf)
    return int(r * sbh + 2 * e * sbf)


def backward_transient_bytes(arch: Architecture, b: int, s: int, e: int, r: int, frozen: bool, autocast: bool,
                             device: str, trainable_b: int) -> int:
    """Gradients alive at the worst moment of one layer's backward pass beyond what the layer keeps
    (its saved tensors are the activation terms): the MLP's, which autograd reaches first
    (``mlp_transient_bytes``). When the down projection trains, its backward has released its saved
    input (``-e·sbf``) and made its weight's gradient (``h·f``)."""
    grads = mlp_transient_bytes(arch, b, s, e, r, autocast, device)
    if not frozen:
        grads += arch.hidden * arch.f * trainable_b - e * s * b * arch.f
    return int(grads)


def span_head_backward_bytes(arch: Architecture, b: int, s: int, e: int) -> int:
    """The span classifier's backward pass, reached while every activation is still held: the gradient
    of its last hidden layer's output (one ``e``-byte value per span and hidden unit), at the worst
    case of ``SpanHead.spans`` spans a row."""
    if arch.span is None:
        return 0
    return int(b * arch.span.spans(max(s - 2, 0)) * arch.span.mlp_hidden * e)


def optimizer_transient_bytes(optimizer: str, params_trainable: int, largest_trainable: int, trainable_b: int) -> int:
    """Temporaries of ``torch.optim.AdamW.step``: none for the fused kernel (what
    ``train.lightning.module.adamw_linear_warmup`` chooses unless gradients are clipped under a
    mixed-precision plugin); the multi-tensor path (``foreach``, torch's default on CUDA) takes
    ``_foreach_sqrt`` of a parameter group's second moments (the trainable parameters, bounding the
    body group); the single-tensor path (torch's default on the CPU) makes ``sqrt`` and its quotient
    for one parameter at a time (twice the largest trainable tensor)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if optimizer == "fused":
        return 0
    if optimizer == "foreach":
        return params_trainable * trainable_b
    return 2 * largest_trainable * trainable_b


def estimate_training_memory(params_total: int, params_trainable: int, arch: Architecture, batch_size: int,
                             seq_len: int, trainer_precision: str | None = "32-true", model_dtype: str | None = None,
                             gradient_checkpointing: bool = False, device: str = "cuda",
                             lora_targets: tuple[str, ...] | list[str] = (), lora_rank: int = 0,
                             optimizer: str = "fused") -> dict:
    """Bytes per named term, the bytes each phase of a training step holds at its worst moment, and
    the peak in GiB (see the module doc for each term's source and the phases).
    ``device``: cuda (the GPU figure) or cpu (what the CPU keeps: dropout masks at the input dtype,
    SDPA's math fallback with dropout). ``optimizer``: fused, foreach or single (AdamW's kernels)."""
    weight_b, e = precision_bytes(trainer_precision, model_dtype)
    precision = str(trainer_precision or "32-true")
    mixed = precision.endswith("-mixed") and weight_b == 4
    r = 4 if mixed else e  # the residual stream stays fp32 under autocast with fp32 weights
    m_h = 1 if device == "cuda" else r  # hidden dropout acts on the residual-stream dtype (CPU: noise tensor)
    m_a = 1 if device == "cuda" else e  # attention dropout acts on the probabilities (CPU: their dtype)
    s, b, h, L = seq_len, batch_size, arch.hidden, arch.layers
    lora_targets = tuple(lora_targets or ())
    frozen = bool(lora_targets)
    autocast = precision.endswith("-mixed")
    layer = _layer_terms(arch, b, s, e, r, m_h, m_a, device, mixed, lora_targets, lora_rank, autocast)
    ln_in = layer_norm_input_bytes(arch.family, r, autocast, device)
    sbh = s * b * h
    decoder = arch.family in DECODERS
    # embeddings: BERT/MPNet/DeBERTa sum -> LayerNorm (input, stats) -> dropout (mask); decoders: the lookup only
    embeddings = 0 if decoder else ln_in * sbh + 8 * b * s + (m_h * sbh if arch.hidden_dropout else 0)
    # the embedding lookups keep their int64 ids: the input ids (b·s) and, for BERT, the position and
    # token-type id buffers (one row of max_position_embeddings = 512, expanded over the batch); MPNet
    # makes position ids per row (b·s) and looks its relative-position bias up once (s×s bucket ids)
    embeddings += 8 * b * s + (2 * 8 * 512 if arch.family == "bert" else 0)
    if arch.family == "mpnet":
        embeddings += 8 * b * s + 8 * s * s
    # decoders: RoPE's cos and sin, which the rotations of Q and K keep (one pair for all layers; s × the
    # rotated width at the hidden states' dtype: the position ids are one row broadcast over the batch)
    rotary = 2 * r * s * int(arch.d * arch.rotary_fraction) if decoder else 0
    embeddings += rotary
    rows = b * s if arch.head == "token" else b
    # what LoRA trains is float32 whatever the base dtype (peft's adapters; the head and
    # modules_to_save: radscore.reward_model.trainable_in_float32)
    trainable_b = 4 if frozen else weight_b
    # decoders are the reward model: its head runs outside autocast in its trained weights' dtype
    # (radscore.reward_model.head_outside_autocast) on every position, so it keeps its input at that
    # dtype (a float32 copy of a 16-bit backbone's output under LoRA)
    if arch.family in GATED:  # final RMSNorm (fp32 input, rstd, normalised), the score head's input
        head = 4 * sbh + 4 * b * s + (0 if frozen else (4 if arch.family == "gemma" else r) * sbh) \
            + trainable_b * sbh
    elif arch.family == "phi":  # final LayerNorm (input, mean, rstd), the score head's input
        head = ln_in * sbh + 8 * b * s + trainable_b * sbh
    elif arch.head == "span":  # an AutoModel encoder: the span classifier is the head (span_head)
        head = 0
    else:  # dropout mask + classifier input (token head) / pooler (sequence head: one position)
        head = ((m_h + e) * sbh if arch.head == "token" else (m_h + 2 * e) * b * h) if arch.hidden_dropout \
            else e * (sbh if arch.head == "token" else b * h)
    if arch.head != "span":
        head += 4 * rows * arch.num_labels  # the loss's fp32 log-softmax / regression output
        head += 8 * rows if arch.head == "token" else 0  # cross-entropy's int64 targets
    span_head = span_head_bytes(arch, b, s, e, 1 if device == "cuda" else e) if arch.span is not None else 0
    logits = b * s * arch.vocab * (e + 4) if arch.lm_head else 0  # logits + fp32 log-softmax
    per_layer = sum(layer.values())
    parts = {"weights": (params_total - params_trainable) * weight_b + params_trainable * trainable_b if frozen
             else params_total * weight_b,
             "autocast_weight_copies": 2 * (params_trainable if frozen else linear_params(arch)) if mixed else 0,
             "master_weights": 0,
             "gradients": params_trainable * trainable_b,
             "optimizer": params_trainable * 2 * trainable_b}
    if gradient_checkpointing:
        k_rel = arch.position_buckets or arch.max_relative_positions
        parts.update({k: 0 for k in layer})
        parts.update(embeddings=embeddings, head=head, span_head=span_head, logits=logits,
                     # each layer's input; DeBERTa's layers also take the b×1×s×s int64 attention mask
                     # (get_attention_mask's outer product of the input mask), the s×s int64 relative
                     # positions and the normalised relative embeddings (2k × h), which the checkpoint keeps
                     checkpointed_layer_inputs=r * sbh * L + (8 * b * s * s + 8 * s * s + r * 2 * k_rel * h
                                                              if arch.family == "deberta-v2" else 0),
                     checkpoint_recompute=per_layer)
    else:
        parts.update({k: v * L for k, v in layer.items()})
        parts.update(embeddings=embeddings, head=head, span_head=span_head, logits=logits,
                     checkpointed_layer_inputs=0, checkpoint_recompute=0)
    if frozen:  # a frozen embedding's output needs no gradient: only LoRA's own tensors
        parts["embeddings"] = rotary if decoder else parts["embeddings"]
    # the largest trainable tensor: the word embeddings, or with LoRA an adapter matrix or the score head
    largest = max(arch.hidden, arch.qw) * max(arch.num_labels, lora_rank, 1) if frozen else arch.vocab * arch.hidden
    # with checkpointing a layer's forward runs without saving: its MLP's temporaries exist for a moment
    parts["forward_transient"] = (mlp_transient_bytes(arch, b, s, e, r, autocast, device, forward=True)
                                  if gradient_checkpointing else 0)
    parts["backward_transient"] = backward_transient_bytes(arch, b, s, e, r, frozen, autocast, device, trainable_b)
    parts["span_head_backward"] = span_head_backward_bytes(arch, b, s, e)
    parts["optimizer_transient"] = optimizer_transient_bytes(optimizer, params_trainable, largest, trainable_b)
    out_bytes = {k: int(v) for k, v in parts.items()}
    out_bytes["activations"] = sum(out_bytes[k] for k in ACTIVATION_TERMS)
    t = out_bytes
    state = t["weights"] + t["master_weights"] + t["optimizer"]
    saved = t["activations"] - t["checkpoint_recompute"]  # what the forward pass leaves for the backward
    phases = {
        # Lightning zeroes the gradients after training_step: the last step's are held
        # through the forward pass; with checkpointing, the worst of two moments: the top layer's MLP
        # temporaries (before the head has made its tensors) and the end (everything saved)
        "forward": state + t["autocast_weight_copies"] + t["gradients"] + max(
            saved - t["head"] - t["span_head"] - t["logits"] + t["forward_transient"], saved),
        # the old gradients zeroed. The worst of three moments: the span classifier's backward (every
        # activation still held), the top layer's (the head's tensors released, that layer recomputed
        # with checkpointing, and its gradients' worst moment) and the end (every gradient made, the
        # activations and weight copies released; the embeddings' gradient comes last)
        "backward": state + max(
            t["autocast_weight_copies"] + saved + t["span_head_backward"] if arch.span is not None else 0,
            t["autocast_weight_copies"] + saved - t["head"] - t["span_head"] - t["logits"]
            + t["checkpoint_recompute"] + t["backward_transient"],
            t["gradients"]),
        "optimizer_step": state + t["gradients"] + t["optimizer_transient"],
    }
    peak_phase = max(phases, key=phases.get)
    return {"bytes": out_bytes, "phases": phases, "peak_phase": peak_phase,
            "gib": round(phases[peak_phase] / GIB, 1),
            "assumptions": {"weight_bytes": weight_b, "activation_bytes": e, "residual_bytes": r,
                            "dropout_mask_bytes": m_h, "batch_size": b, "seq_len": s, "device": device,
                            "family": arch.family, "attention": arch.attention, "optimizer": optimizer,
                            "gradient_checkpointing": gradient_checkpointing, "lora_targets": list(lora_targets),
                            "activations_per_layer": int(per_layer)}}
