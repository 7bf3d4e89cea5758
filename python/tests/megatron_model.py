"""Megatron-Core's own GPTModel of one rank, on CPU (megatron-core
0.16.1's local layer specs, no Transformer Engine; gloo process groups),
for the refits of test_runtime.py: the parameters Megatron builds, not the
ones test_names.py writes from its conventions. MLA is left to the fakes:
megatron-core's local spec cannot build MLASelfAttention without
Transformer Engine."""
import contextlib
import socket
import warnings

from orders_ref import megatron_vocab_rows


def build_rank(m, train, layers, comm):
    """This MPI rank's model (a list of model chunks with vpp) of Model m
    under the Megatron spec `train`, after torch.distributed (gloo) and
    Megatron's parallel state are set up over comm's ranks."""
    warnings.simplefilter("ignore")
    import torch.distributed as dist
    from megatron.core import parallel_state as ps
    from reshard.megatron import parse_train
    t = parse_train(train)
    port = None
    if comm.Get_rank() == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    port = comm.bcast(port, root=0)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=comm.Get_rank(), world_size=comm.Get_size())
    ps.initialize_model_parallel(
        tensor_model_parallel_size=t.tp, pipeline_model_parallel_size=t.pp,
        virtual_pipeline_model_parallel_size=t.vpp if t.vpp > 1 else None,
        context_parallel_size=t.cp, expert_model_parallel_size=t.ep,
        expert_tensor_parallel_size=t.etp)
    # GPTModel takes the padded vocab (Megatron-LM's args.padded_vocab_size).
    chunks = build(m, t, layers, megatron_vocab_rows(m, t) * t.tp)
    return chunks[0] if len(chunks) == 1 else chunks


def build(m, t, layers, vocab_rows_total):
    warnings.simplefilter("ignore")
    import torch
    from megatron.core.transformer.transformer_config import \
        TransformerConfig
    kw = dict(num_layers=layers, hidden_size=m.hidden,
              num_attention_heads=m.heads,
              ffn_hidden_size=m.intermediate, gated_linear_unit=True,
              normalization="RMSNorm", add_bias_linear=False,
              add_qkv_bias=m.qkv_bias, qk_layernorm=m.qk_norm,
              attention_output_gate=m.attn_output_gate,
              use_cpu_initialization=True, perform_initialization=False,
              params_dtype=torch.bfloat16, bf16=True,
              pipeline_dtype=torch.bfloat16,
              tensor_model_parallel_size=t.tp,
              pipeline_model_parallel_size=t.pp,
              context_parallel_size=t.cp,
              expert_model_parallel_size=t.ep,
              expert_tensor_parallel_size=t.etp)
    if t.vpp > 1:
        kw["virtual_pipeline_model_parallel_size"] = t.vpp
    if t.layout is not None:        # Megatron's list form of the layout
        names = dict(E="embedding", t="decoder", m="mtp", L="loss")
        kw["pipeline_model_parallel_layout"] = [
            [names[c] for c in s] for s in t.layout.stages]
    if t.first is not None:
        kw["num_layers_in_first_pipeline_stage"] = t.first
        kw["num_layers_in_last_pipeline_stage"] = t.last
    if m.experts:
        kw.update(num_moe_experts=m.experts,
                  moe_ffn_hidden_size=m.moe_intermediate,
                  moe_layer_freq=[0 if g in m.dense_layers else 1
                                  for g in range(layers)],
                  moe_grouped_gemm=False, moe_router_topk=2)
        if m.shared_experts:
            kw["moe_shared_expert_intermediate_size"] = \
                m.moe_intermediate * m.shared_experts
        if m.score_bias:
            kw["moe_router_enable_expert_bias"] = True
            kw["moe_router_score_function"] = "sigmoid"
    if m.gpt_oss:
        # Megatron-Bridge's GPT-OSS provider: biases on every linear layer
        # (the router's and the experts' too), a learnable softmax offset
        # (the sinks).
        kw.update(add_bias_linear=True, softmax_type="learnable")
    if m.mla:
        raise ValueError("MLA: megatron-core's local spec needs TE")
    kw.update(num_query_groups=m.kv_heads, kv_channels=m.head_dim)
    cfg = TransformerConfig(**kw)
    chunks = []
    # The router puts its expert_bias buffer on torch.cuda.current_device();
    # without a GPU, on the CPU.
    from unittest import mock
    cpu = mock.patch("torch.cuda.current_device", return_value="cpu")
    with cpu if not torch.cuda.is_available() else contextlib.nullcontext():
        for v in range(t.vpp):
            chunks.append(_chunk(m, t, cfg, v, vocab_rows_total))
    return chunks


def _chunk(m, t, cfg, v, vocab_rows_total):
    """Model chunk v (the whole stage without vpp)."""
    from megatron.core import parallel_state as ps
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import \
        get_gpt_decoder_block_spec
    from megatron.core.transformer.module import Float16Module
    vp = v if t.vpp > 1 else None
    spec = get_gpt_decoder_block_spec(cfg, use_transformer_engine=False,
                                      normalization="RMSNorm", vp_stage=vp)
    model = GPTModel(
        cfg, spec, vocab_size=vocab_rows_total, max_sequence_length=64,
        pre_process=ps.is_pipeline_first_stage(ignore_virtual=False,
                                               vp_stage=vp),
        post_process=ps.is_pipeline_last_stage(ignore_virtual=False,
                                               vp_stage=vp),
        share_embeddings_and_output_weights=m.tie_embeddings,
        position_embedding_type="rope", vp_stage=vp)
    # As Megatron's get_model does for bf16: the whole chunk in bf16 (norms
    # included), its names under "module.". That makes the routers'
    # expert_bias bf16 too, until their first forward (or state dict)
    # turns it back to fp32, as every trained model holds it.
    model = Float16Module(cfg, model)
    for module in model.modules():
        if hasattr(module, "_maintain_float32_expert_bias"):
            module._maintain_float32_expert_bias()
    return model
