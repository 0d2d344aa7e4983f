"""Default configuration (yacs); a YAML file and KEY VALUE pairs from the command line override it."""
from yacs.config import CfgNode as CN

_C = CN()
_C.MODEL = CN()
_C.MODEL.META_ARCHITECTURE = "GeneralizedRCNN"
_C.MODEL.BACKBONE = "resnet50"
_C.MODEL.NUM_CLASSES = 80
_C.DATASETS = CN()
_C.DATASETS.TRAIN = ("coco_2017_train",)
_C.DATASETS.TEST = ("coco_2017_val",)
_C.SOLVER = CN()
_C.SOLVER.IMS_PER_BATCH = 16
_C.SOLVER.BASE_LR = 0.02
_C.SOLVER.MAX_ITER = 90000
_C.SOLVER.AMP = False
_C.DATALOADER = CN()
_C.DATALOADER.NUM_WORKERS = 4


def get_cfg():
    return _C.clone()
