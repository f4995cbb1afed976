"""Can a model of nano's shape learn to copy? The PyTorch side of the question lesson 7 raised.

A Llama-family model in plain torch with nano's shape (byte vocabulary of 264, hidden 96, MLP 256,
3 layers, 3 heads over 1 KV head, rotate-half RoPE, tied head; the same maths as TabRL's CPU
reference) is trained from a seeded init on "echo" chats only, in the byte tokenizer's chat format:
`<|bos|><|user|>Repeat: QK-40721 MV-118<|end|><|assistant|>QK-40721 MV-118<|end|>` (one to four
identifiers of 2-3 capitals, a dash and 3-5 digits), rows of 128 tokens packed as
scripts/nano/pretrain.ts packs them, AdamW (lr 3e-3 after 30 warm-up steps, betas 0.9/0.99, weight
decay 0.01, gradient norm clipped to 1). Every 250 steps it says back 40 fresh identifiers greedily
and counts the exact copies, and the share of the answer's characters right under teacher forcing.

Run with Debian's python3-torch (CPU, one thread):
  /usr/bin/python3 bench/copy_learning_peer.py --steps 2000 --init-std 0.02
  /usr/bin/python3 bench/copy_learning_peer.py --steps 2000 --init-std 0.1

Prints a table and one JSON line.
"""
import argparse
import json
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

BOS, USER, ASSISTANT, END = 257, 260, 261, 263
VOCAB = 264

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=2000)
parser.add_argument('--init-std', type=float, default=0.02)
parser.add_argument('--hidden', type=int, default=96)
parser.add_argument('--intermediate', type=int, default=256)
parser.add_argument('--layers', type=int, default=3)
parser.add_argument('--heads', type=int, default=3)
parser.add_argument('--kv-heads', type=int, default=1)
parser.add_argument('--lr', type=float, default=3e-3)
parser.add_argument('--seed', type=int, default=0)
args = parser.parse_args()
HEAD_DIM = args.hidden // args.heads
torch.manual_seed(args.seed)
torch.set_num_threads(1)
data = random.Random(args.seed)
probe_data = random.Random(1_000_003 + args.seed)


def identifier(rng):
    letters = ''.join(rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ') for _ in range(rng.randint(2, 3)))
    return letters + '-' + ''.join(rng.choice('0123456789') for _ in range(rng.randint(3, 5)))


def chat(rng, values=None):
    """One echo chat's token ids, and where its answer starts."""
    values = values or [identifier(rng) for _ in range(rng.randint(1, 4))]
    prompt = [BOS, USER] + list(('Repeat: ' + ' '.join(values)).encode()) + [END, ASSISTANT]
    return prompt + list(' '.join(values).encode()) + [END], len(prompt)


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(args.hidden))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)


def rope(x, length):
    inverse = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
    angles = torch.outer(torch.arange(length).float(), inverse)
    angles = torch.cat([angles, angles], -1)
    half = HEAD_DIM // 2
    return x * angles.cos() + torch.cat([-x[..., half:], x[..., :half]], -1) * angles.sin()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        h, kv = args.hidden, args.kv_heads * HEAD_DIM
        self.attention_norm, self.mlp_norm = RMSNorm(), RMSNorm()
        self.q, self.k, self.v = nn.Linear(h, h, bias=False), nn.Linear(h, kv, bias=False), nn.Linear(h, kv, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        self.gate, self.up = nn.Linear(h, args.intermediate, bias=False), nn.Linear(h, args.intermediate, bias=False)
        self.down = nn.Linear(args.intermediate, h, bias=False)

    def forward(self, x):
        batch, length, _ = x.shape
        h = self.attention_norm(x)
        q = rope(self.q(h).view(batch, length, args.heads, HEAD_DIM).transpose(1, 2), length)
        k = rope(self.k(h).view(batch, length, args.kv_heads, HEAD_DIM).transpose(1, 2), length)
        v = self.v(h).view(batch, length, args.kv_heads, HEAD_DIM).transpose(1, 2)
        k, v = (t.repeat_interleave(args.heads // args.kv_heads, 1) for t in (k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
        scores = scores.masked_fill(torch.triu(torch.ones(length, length, dtype=torch.bool), 1), float('-inf'))
        x = x + self.o((scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, args.hidden))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, args.hidden)
        self.blocks = nn.ModuleList(Block() for _ in range(args.layers))
        self.norm = RMSNorm()
        for parameter in self.parameters():
            if parameter.dim() == 2:
                nn.init.normal_(parameter, 0, args.init_std)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.embed.weight.T


def batch(rows=16, length=128):
    packed = []
    for _ in range(rows):
        row = []
        while len(row) < length + 1:
            row += chat(data)[0]
        packed.append(row[: length + 1])
    tokens = torch.tensor(packed)
    return tokens[:, :-1], tokens[:, 1:]


@torch.no_grad()
def probe(model, count=40):
    """Exact greedy copies of `count` fresh identifiers, and the share of answer characters right under teacher forcing."""
    exact, right, total = 0, 0, 0
    for _ in range(count):
        value = identifier(probe_data)
        ids, start = chat(probe_data, [value])
        predicted = model(torch.tensor([ids[:-1]]))[0].argmax(-1).tolist()
        right += sum(predicted[i - 1] == ids[i] for i in range(start, len(ids) - 1))
        total += len(ids) - 1 - start
        out = []
        for _ in range(len(value) + 2):
            token = model(torch.tensor([ids[:start] + out]))[0, -1].argmax().item()
            if token == END:
                break
            out.append(token)
        exact += bytes(t for t in out if t < 256).decode(errors='replace') == value
    return exact / count, right / total


model = Model()
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01)
rows = []
print(f'| step | loss | exact copies | answer characters right | (init std {args.init_std}, hidden {args.hidden}, {args.layers} layers, {args.heads} heads over {args.kv_heads} KV) |')
print('|---|---|---|---|')
for step in range(1, args.steps + 1):
    for group in optimizer.param_groups:
        group['lr'] = args.lr * min(1, step / 30)
    ids, targets = batch()
    loss = F.cross_entropy(model(ids).reshape(-1, VOCAB), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % 250 == 0:
        exact, characters = probe(model)
        rows.append({'step': step, 'loss': round(loss.item(), 3), 'exact': exact, 'characters': round(characters, 3)})
        print(f"| {step} | {loss.item():.3f} | {exact:.3f} | {characters:.3f} |", flush=True)
print(json.dumps({'bench': 'copy_learning_peer', 'initStd': args.init_std, 'hidden': args.hidden, 'layers': args.layers, 'heads': args.heads, 'kvHeads': args.kv_heads, 'lr': args.lr, 'seed': args.seed, 'probes': rows}))
