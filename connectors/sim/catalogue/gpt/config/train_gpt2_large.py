# GPT-2 large (774M) on OpenWebText
batch_size = 4
block_size = 1024
gradient_accumulation_steps = 16 * 8
max_iters = 300000
n_layer = 36
n_head = 20
n_embd = 1280
learning_rate = 2.5e-4
