#!/usr/bin/env python3
# make_golden.py — golden fixtures for TabRL's model backends, version 1.
#
# Writes test/fixtures/golden/<variant>.safetensors + <variant>.json for three tiny Llama-family
# configs: "plain" (LlamaForCausalLM, untied head), "qkv_bias" (Qwen2ForCausalLM: q/k/v bias,
# tied head) and "qk_norm" (Qwen3ForCausalLM: per-head q/k RMSNorm, head_dim*heads != hidden).
# Each holds the initial parameters, the inputs (ids, targets, per-token weights), the logits, the
# per-token log-probs at temperature 1 and 0.7, the loss sum(weights * logprobs), the gradient of
# that loss for every parameter, and the loss and pre-clip grad norm of 10 AdamW steps.
#
# Pure PyTorch (Debian's python3-torch, 1.13), no `transformers`: the forward below is written to
# match Hugging Face's modeling_llama / modeling_qwen2 / modeling_qwen3 exactly (rotate-half RoPE,
# repeat_kv grouping, RMSNorm in the form x * rsqrt(mean(x^2) + eps) * w). Parameters are drawn in
# float32 (so both sides start from identical values) and everything is computed in float64, so the
# fixture is a better oracle than an f32 run; tensors are stored as F32.
#
# Regenerate:  /usr/bin/python3 scripts/golden/make_golden.py   (from the repository root)
import json
import math
import os
import struct

import numpy as np
import torch

GENERATOR_VERSION = 1
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'test', 'fixtures', 'golden')

BASE = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, hidden_act='silu')
VARIANTS = {
    'plain': dict(BASE, architectures=['LlamaForCausalLM'], model_type='llama', head_dim=8,
                  rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False, attention_bias=False),
    'qkv_bias': dict(BASE, architectures=['Qwen2ForCausalLM'], model_type='qwen2', head_dim=8,
                     rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
    'qk_norm': dict(BASE, architectures=['Qwen3ForCausalLM'], model_type='qwen3', head_dim=12,
                    rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, attention_bias=False),
}
B, T = 2, 8
PADDING = 3  # the second sequence's last 3 positions are padding: weight 0
LOW_TEMPERATURE = 0.7
OPTIMIZER = dict(lr=1e-2, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1, max_grad_norm=1.0)
STEPS = 10


def param_shapes(cfg):
    """(name, shape) of every parameter, Hugging Face names, in TabRL's layout order."""
    V, C, I, HS = cfg['vocab_size'], cfg['hidden_size'], cfg['intermediate_size'], cfg['head_dim']
    QD, KVD = cfg['num_attention_heads'] * HS, cfg['num_key_value_heads'] * HS
    qkv_bias = cfg['model_type'] == 'qwen2' or cfg.get('attention_bias', False)
    o_bias = cfg['model_type'] != 'qwen2' and cfg.get('attention_bias', False)
    shapes = [('model.embed_tokens.weight', (V, C))]
    for l in range(cfg['num_hidden_layers']):
        p = f'model.layers.{l}'
        shapes.append((f'{p}.input_layernorm.weight', (C,)))
        for name, oc, ic, bias in [('q_proj', QD, C, qkv_bias), ('k_proj', KVD, C, qkv_bias),
                                   ('v_proj', KVD, C, qkv_bias), ('o_proj', C, QD, o_bias)]:
            shapes.append((f'{p}.self_attn.{name}.weight', (oc, ic)))
            if bias:
                shapes.append((f'{p}.self_attn.{name}.bias', (oc,)))
        if cfg['model_type'] == 'qwen3':
            shapes.append((f'{p}.self_attn.q_norm.weight', (HS,)))
            shapes.append((f'{p}.self_attn.k_norm.weight', (HS,)))
        shapes.append((f'{p}.post_attention_layernorm.weight', (C,)))
        shapes.append((f'{p}.mlp.gate_proj.weight', (I, C)))
        shapes.append((f'{p}.mlp.up_proj.weight', (I, C)))
        shapes.append((f'{p}.mlp.down_proj.weight', (C, I)))
    shapes.append(('model.norm.weight', (C,)))
    if not cfg['tie_word_embeddings']:
        shapes.append(('lm_head.weight', (V, C)))
    return shapes


def init_params(cfg, seed):
    """Seeded float32 draws, then float64: weights normal(0, 0.2) (larger than HF's 0.02 so the
    fixture exercises every path with O(1) signals), norms 1 + normal(0, 0.1), biases normal(0, 0.1)."""
    g = torch.Generator().manual_seed(seed)
    params = {}
    for name, shape in param_shapes(cfg):
        x = torch.randn(shape, generator=g, dtype=torch.float32)
        if name.endswith('norm.weight'):
            x = 1 + 0.1 * x
        elif name.endswith('.bias'):
            x = 0.1 * x
        else:
            x = 0.2 * x
        params[name] = x.double().requires_grad_(True)
    return params


def rmsnorm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, theta):
    """x (B, T, H, HS); positions 0..T-1; HF's apply_rotary_pos_emb with inv_freq = theta^(-2i/HS)."""
    HS = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, HS, 2, dtype=torch.float64) / HS))
    freqs = torch.arange(x.shape[1], dtype=torch.float64)[:, None] * inv_freq[None, :]  # (T, HS/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]
    return x * cos + rotate_half(x) * sin


def forward(cfg, params, ids):
    """Logits (B, T, V) of the decoder, HF semantics, float64."""
    NH, KVH, HS, eps = cfg['num_attention_heads'], cfg['num_key_value_heads'], cfg['head_dim'], cfg['rms_norm_eps']
    Bn, Tn = ids.shape
    P = lambda name: params.get(name)
    x = P('model.embed_tokens.weight')[ids]
    causal = torch.ones(Tn, Tn, dtype=torch.bool).tril()
    for l in range(cfg['num_hidden_layers']):
        p = f'model.layers.{l}'
        h = rmsnorm(x, P(f'{p}.input_layernorm.weight'), eps)
        lin = lambda inp, name: torch.nn.functional.linear(inp, P(f'{p}.{name}.weight'), P(f'{p}.{name}.bias'))
        q = lin(h, 'self_attn.q_proj').view(Bn, Tn, NH, HS)
        k = lin(h, 'self_attn.k_proj').view(Bn, Tn, KVH, HS)
        v = lin(h, 'self_attn.v_proj').view(Bn, Tn, KVH, HS)
        if cfg['model_type'] == 'qwen3':
            q = rmsnorm(q, P(f'{p}.self_attn.q_norm.weight'), eps)
            k = rmsnorm(k, P(f'{p}.self_attn.k_norm.weight'), eps)
        q, k = rope(q, cfg['rope_theta']), rope(k, cfg['rope_theta'])
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, T, HS)
        k = k.repeat_interleave(NH // KVH, dim=1)  # repeat_kv: head h reads kv head h // (NH/KVH)
        v = v.repeat_interleave(NH // KVH, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(HS)
        scores = scores.masked_fill(~causal, float('-inf'))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(Bn, Tn, NH * HS)
        x = x + lin(y, 'self_attn.o_proj')
        h = rmsnorm(x, P(f'{p}.post_attention_layernorm.weight'), eps)
        gate, up = lin(h, 'mlp.gate_proj'), lin(h, 'mlp.up_proj')
        x = x + lin(torch.nn.functional.silu(gate) * up, 'mlp.down_proj')
    x = rmsnorm(x, P('model.norm.weight'), eps)
    head = P('model.embed_tokens.weight') if cfg['tie_word_embeddings'] else P('lm_head.weight')
    return x @ head.T


def token_logprobs(logits, targets, temperature):
    return torch.log_softmax(logits / temperature, dim=-1).gather(-1, targets[..., None])[..., 0]


def write_safetensors(path, tensors):
    header, offset, chunks = {'__metadata__': {'generator': f'make_golden.py v{GENERATOR_VERSION}'}}, 0, []
    for name, t in tensors.items():
        data = np.ascontiguousarray(t.detach().cpu().numpy().astype('<f4')).tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header_bytes = json.dumps(header).encode()
    header_bytes += b' ' * (-len(header_bytes) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(header_bytes)))
        f.write(header_bytes)
        for chunk in chunks:
            f.write(chunk)


def make_variant(variant, cfg, seed):
    params = init_params(cfg, seed)
    initial = {name: t.detach().clone() for name, t in params.items()}
    g = torch.Generator().manual_seed(1000 + seed)
    ids = torch.randint(0, cfg['vocab_size'], (B, T), generator=g)
    targets = torch.cat([ids[:, 1:], torch.randint(0, cfg['vocab_size'], (B, 1), generator=g)], dim=1)
    mask = torch.ones(B, T, dtype=torch.float64)
    mask[1, T - PADDING:] = 0
    weights = -mask / mask.sum()  # SFT: loss = -mean logprob over real tokens = sum(weights * logprobs)

    logits = forward(cfg, params, ids)
    logprobs = token_logprobs(logits, targets, 1.0)
    logprobs_low = token_logprobs(logits, targets, LOW_TEMPERATURE)
    loss = (weights * logprobs).sum()
    loss.backward()
    grads = {name: t.grad.detach().clone() for name, t in params.items()}

    # 10 steps of AdamW with clipping on the same batch: the loss before each step
    for t in params.values():
        t.grad = None
    opt = torch.optim.AdamW(list(params.values()), lr=OPTIMIZER['lr'], betas=(OPTIMIZER['beta1'], OPTIMIZER['beta2']),
                            eps=OPTIMIZER['eps'], weight_decay=OPTIMIZER['weight_decay'])
    losses, grad_norms = [], []
    for _ in range(STEPS):
        opt.zero_grad()
        step_loss = (weights * token_logprobs(forward(cfg, params, ids), targets, 1.0)).sum()
        step_loss.backward()
        grad_norms.append(float(torch.nn.utils.clip_grad_norm_(list(params.values()), OPTIMIZER['max_grad_norm'])))
        opt.step()
        losses.append(float(step_loss))

    tensors = {f'param.{n}': t for n, t in initial.items()}
    tensors.update({f'grad.{n}': t for n, t in grads.items()})
    tensors['logits'] = logits.detach()
    tensors['logprobs'] = logprobs.detach().reshape(-1)
    tensors['logprobs_low_temperature'] = logprobs_low.detach().reshape(-1)
    write_safetensors(os.path.join(OUT_DIR, f'{variant}.safetensors'), tensors)
    meta = {
        'generator': 'scripts/golden/make_golden.py',
        'generator_version': GENERATOR_VERSION,
        'torch_version': torch.__version__,
        'variant': variant,
        'seed': seed,
        'config': cfg,
        'B': B, 'T': T,
        'ids': ids.reshape(-1).tolist(),
        'targets': targets.reshape(-1).tolist(),
        'weights': weights.reshape(-1).tolist(),
        'low_temperature': LOW_TEMPERATURE,
        'loss': float(loss),
        'optimizer': OPTIMIZER,
        'losses': losses,
        'grad_norms': grad_norms,
    }
    with open(os.path.join(OUT_DIR, f'{variant}.json'), 'w') as f:
        json.dump(meta, f, indent=1)
        f.write('\n')
    print(f'{variant}: loss {float(loss):.6f} -> {losses[-1]:.6f} after {STEPS} steps')


if __name__ == '__main__':
    torch.set_default_dtype(torch.float64)
    os.makedirs(OUT_DIR, exist_ok=True)
    for i, (variant, cfg) in enumerate(VARIANTS.items()):
        make_variant(variant, cfg, seed=i + 1)
