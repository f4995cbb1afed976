"""The PyTorch peer of `npm run bench:cpu` (bench/cpu.ts): a Llama-family model in plain torch (the
same maths as TabRL's CPU reference: RMSNorm, rotate-half RoPE, causal grouped-query attention,
SwiGLU, tied head), trained from the weights and batch bench/cpu.ts writes, one step per command.

Run by bench/cpu.ts with Debian's /usr/bin/python3 (python3-torch, libopenblas0-pthread). It reads
one command per line on stdin and answers one JSON line on stdout:
  load NAME DIR        -> {"params": n}         weights.bin + model.json from DIR
  step NAME THREADS    -> {"ms": t, "cpuMs": c, "loss": l}  zero_grad, forward, backward, clip, AdamW
                          (cpuMs: the process's CPU time, every thread's, for the step)
  matmul M K N THREADS REPS -> {"ms": t}        median of REPS (M, K) @ (K, N)ᵀ products

THREADS sets both PyTorch's threads and OpenBLAS's: torch.set_num_threads does not reach OpenBLAS's
own pthread pool, which otherwise splits every product over all cores (measured: at
torch.set_num_threads(1) a second thread did 43 % of the matmuls' CPU time).
"""
import ctypes
import json
import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(0)
models = {}


def find_openblas():
    """The loaded OpenBLAS library (the one exporting openblas_set_num_threads) that torch's products run on."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.lower() and line.split()[-1].startswith("/")})
    for path in paths:
        library = ctypes.CDLL(path)
        if hasattr(library, "openblas_set_num_threads"):
            return library
    raise RuntimeError(f"torch does not run on OpenBLAS here (mapped: {paths}); install libopenblas0-pthread so its thread count can be set")


OPENBLAS = find_openblas()


def set_threads(threads):
    """Runs PyTorch's ops and OpenBLAS's products on `threads` threads."""
    torch.set_num_threads(threads)
    OPENBLAS.openblas_set_num_threads(threads)
    if OPENBLAS.openblas_get_num_threads() != threads:
        raise RuntimeError(f"OpenBLAS runs {OPENBLAS.openblas_get_num_threads()} threads after asking for {threads}")


def rmsnorm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Peer:
    def __init__(self, folder):
        with open(f"{folder}/model.json") as f:
            spec = json.load(f)
        flat = np.fromfile(f"{folder}/weights.bin", dtype=np.float32)
        self.config = spec["config"]
        self.params = {}
        for slot in spec["params"]:
            data = flat[slot["offset"] : slot["offset"] + slot["size"]].reshape(slot["shape"])
            self.params[slot["name"]] = torch.tensor(data, requires_grad=True)
        self.ids = torch.tensor(spec["ids"], dtype=torch.long).view(spec["B"], spec["T"])
        self.targets = torch.tensor(spec["targets"], dtype=torch.long).view(-1)
        self.opt_settings = spec["optimizer"]
        self.optimizer = torch.optim.AdamW(
            list(self.params.values()),
            lr=self.opt_settings["lr"],
            betas=(self.opt_settings["beta1"], self.opt_settings["beta2"]),
            eps=self.opt_settings["eps"],
            weight_decay=self.opt_settings["weightDecay"],
        )
        c = self.config
        HS = c["head_dim"]
        T = spec["T"]
        inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, HS, 2, dtype=torch.float64) / HS))
        angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.cos = angles.cos().float()[None, :, None, :]  # (1, T, 1, HS)
        self.sin = angles.sin().float()[None, :, None, :]
        self.mask = torch.full((T, T), float("-inf")).triu(1)

    def loss(self):
        c, p = self.config, self.params
        B, T = self.ids.shape
        NH, KVH, HS, eps = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"], c["rms_norm_eps"]
        x = p["model.embed_tokens.weight"][self.ids]
        for l in range(c["num_hidden_layers"]):
            pre = f"model.layers.{l}."
            h = rmsnorm(x, p[pre + "input_layernorm.weight"], eps)
            q = (h @ p[pre + "self_attn.q_proj.weight"].t()).view(B, T, NH, HS)
            k = (h @ p[pre + "self_attn.k_proj.weight"].t()).view(B, T, KVH, HS)
            v = (h @ p[pre + "self_attn.v_proj.weight"].t()).view(B, T, KVH, HS)
            q = q * self.cos + rotate_half(q) * self.sin
            k = k * self.cos + rotate_half(k) * self.sin
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, heads, T, HS)
            k = k.repeat_interleave(NH // KVH, dim=1)
            v = v.repeat_interleave(NH // KVH, dim=1)
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(HS) + self.mask, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, NH * HS)
            x = x + y @ p[pre + "self_attn.o_proj.weight"].t()
            h = rmsnorm(x, p[pre + "post_attention_layernorm.weight"], eps)
            gate = h @ p[pre + "mlp.gate_proj.weight"].t()
            up = h @ p[pre + "mlp.up_proj.weight"].t()
            x = x + (F.silu(gate) * up) @ p[pre + "mlp.down_proj.weight"].t()
        h = rmsnorm(x, p["model.norm.weight"], eps)
        head = p["model.embed_tokens.weight"] if c["tie_word_embeddings"] else p["lm_head.weight"]
        logits = h @ head.t()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), self.targets)

    def step(self):
        self.optimizer.zero_grad(set_to_none=False)
        loss = self.loss()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(self.params.values()), self.opt_settings["maxGradNorm"])
        self.optimizer.step()
        return loss.item()


def main():
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "load":
            models[words[1]] = Peer(words[2])
            answer = {"params": sum(t.numel() for t in models[words[1]].params.values())}
        elif words[0] == "step":
            set_threads(int(words[2]))
            start, cpu_start = time.perf_counter(), time.process_time()
            loss = models[words[1]].step()
            answer = {"ms": (time.perf_counter() - start) * 1000, "cpuMs": (time.process_time() - cpu_start) * 1000, "loss": loss}
        elif words[0] == "matmul":
            M, K, N, threads, reps = map(int, words[1:])
            set_threads(threads)
            a, b = torch.rand(M, K) * 2 - 1, torch.rand(N, K) * 2 - 1
            times = []
            for _ in range(reps + 1):
                start = time.perf_counter()
                a @ b.t()
                times.append((time.perf_counter() - start) * 1000)
            answer = {"ms": sorted(times[1:])[reps // 2]}
        else:
            answer = {"error": f"unknown command {words[0]}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
