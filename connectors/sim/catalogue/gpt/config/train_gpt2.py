# GPT-2 (124M) on OpenWebText
batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8
max_iters = 600000
n_layer = 12
n_head = 12
n_embd = 768
