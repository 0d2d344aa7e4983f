# GPT-2 medium (350M) on OpenWebText
batch_size = 8
block_size = 1024
gradient_accumulation_steps = 8 * 8
max_iters = 400000
n_layer = 24
n_head = 16
n_embd = 1024
learning_rate = 3e-4
