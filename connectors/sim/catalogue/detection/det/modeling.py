"""Two detectors on torchvision backbones."""
import torchvision


def build_model(cfg):
    if cfg.MODEL.META_ARCHITECTURE == "RetinaNet":
        return torchvision.models.detection.retinanet_resnet50_fpn(num_classes=cfg.MODEL.NUM_CLASSES)
    if cfg.MODEL.META_ARCHITECTURE == "MaskRCNN":
        return torchvision.models.detection.maskrcnn_resnet50_fpn(num_classes=cfg.MODEL.NUM_CLASSES)
    return torchvision.models.detection.fasterrcnn_resnet50_fpn(num_classes=cfg.MODEL.NUM_CLASSES)
