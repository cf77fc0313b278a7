# source: https://github.com/vllm-project/vllm/issues/940
# symptom: attention output has NaN: True
# CacheEngine.allocate_gpu_cache creates the paged KV cache with torch.empty; attention over a block reads the
# slots no token has been written to yet (masked additively), so garbage leaks into the output.
# (fill_uninitialized_memory makes the garbage deterministic: fresh memory reads NaN.)
import torch

torch.use_deterministic_algorithms(True)
torch.utils.deterministic.fill_uninitialized_memory = True
torch.manual_seed(0)

KVCache = tuple


class CacheEngine:
    def __init__(self, num_layers, num_heads, head_size, block_size, num_gpu_blocks):
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.head_size = head_size
        self.block_size = block_size
        self.num_gpu_blocks = num_gpu_blocks
        self.gpu_cache = self.allocate_gpu_cache()

    def get_key_block_shape(self):
        return (self.num_heads, self.block_size, self.head_size)

    def get_value_block_shape(self):
        return (self.num_heads, self.block_size, self.head_size)

    def allocate_gpu_cache(self):
        gpu_cache = []
        key_block_shape = self.get_key_block_shape()
        value_block_shape = self.get_value_block_shape()
        for _ in range(self.num_layers):
            key_blocks = torch.empty(size=(self.num_gpu_blocks, *key_block_shape), dtype=torch.float32)  # expect: AG012
            value_blocks = torch.empty(size=(self.num_gpu_blocks, *value_block_shape), dtype=torch.float32)  # expect: AG012
            gpu_cache.append((key_blocks, value_blocks))
        return gpu_cache


def write_to_cache(cache, block, slot, key, value):
    key_blocks, value_blocks = cache
    key_blocks[block, :, slot] = key
    value_blocks[block, :, slot] = value


def paged_attention(query, cache, block, context_len, block_size):
    key_blocks, value_blocks = cache
    keys = key_blocks[block]                     # (heads, block_size, head_size)
    values = value_blocks[block]
    scores = torch.einsum("hd,hsd->hs", query, keys) / keys.shape[-1] ** 0.5
    mask = torch.zeros(block_size)
    mask[context_len:] = float("-inf")           # unwritten slots are masked additively
    probs = torch.softmax(scores + mask, dim=-1)
    return torch.einsum("hs,hsd->hd", probs, values)


engine = CacheEngine(num_layers=2, num_heads=2, head_size=4, block_size=8, num_gpu_blocks=4)
layer_cache = engine.gpu_cache[0]
for slot in range(3):  # a 3-token prompt fills 3 of the 8 slots of block 0
    write_to_cache(layer_cache, 0, slot, torch.randn(2, 4), torch.randn(2, 4))
out = paged_attention(torch.randn(2, 4), layer_cache, block=0, context_len=3, block_size=8)
print("attention output has NaN:", bool(torch.isnan(out).any()))
