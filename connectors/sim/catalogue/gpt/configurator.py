# Poor man's configurator: `python train.py config/x.py --batch_size=32` overrides the globals of train.py.
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        assert not arg.startswith("--")
        print(f"Overriding config with {arg}:")
        exec(open(arg).read())
    else:
        key, val = arg[2:].split("=", 1)
        if key in globals():
            try:
                attempt = literal_eval(val)
            except (SyntaxError, ValueError):
                attempt = val
            print(f"Overriding: {key} = {attempt}")
            globals()[key] = attempt
        else:
            raise ValueError(f"Unknown config key: {key}")
