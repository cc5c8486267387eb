"""tf.config.experimental: the physical and logical devices of this process, their
visibility and (for GPUs) memory growth. See the package's doc."""

from __future__ import annotations

import collections

from xlapy.compat.v1.framework import gpu_present

__all__ = ["get_memory_growth", "get_visible_devices", "list_logical_devices",
           "list_physical_devices", "set_memory_growth", "set_visible_devices"]

_PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
_LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

_LOGICAL_PREFIX = "/job:localhost/replica:0/task:0/device:"
_GPU_TYPES = ("GPU", "XLA_GPU")
_state: dict = {"visible": None, "growth": {}}


def _physical() -> list:
    kinds = ["CPU", "XLA_CPU"] + (["XLA_GPU"] if gpu_present() else [])
    return [_PhysicalDevice(f"/physical_device:{k}:0", k) for k in kinds]


def _check_type(device_type):
    if device_type is not None and not isinstance(device_type, str):
        raise ValueError(f"device_type must be a string such as 'CPU' or 'GPU', got "
                         f"{device_type!r}")


def list_physical_devices(device_type=None) -> list:
    """The physical devices of this process (of device_type, if given): CPU, XLA_CPU and,
    with a GPU, XLA_GPU."""
    _check_type(device_type)
    return [d for d in _physical() if device_type is None or d.device_type == device_type]


def _visible() -> list:
    v = _state["visible"]
    return list(v) if v is not None else _physical()


def get_visible_devices(device_type=None) -> list:
    """The physical devices left visible by set_visible_devices (all, by default)."""
    _check_type(device_type)
    return [d for d in _visible() if device_type is None or d.device_type == device_type]


def set_visible_devices(devices, device_type=None) -> None:
    """Make `devices` (a PhysicalDevice or a list of them) the visible devices of
    device_type (of every type when None). The CPU cannot be hidden: xlapy runs on it."""
    _check_type(device_type)
    if isinstance(devices, _PhysicalDevice):
        devices = [devices]
    devices = list(devices)
    physical = _physical()
    for d in devices:
        if d not in physical:
            raise ValueError(f"Unrecognized device: {d!r} (list_physical_devices() gives "
                             "the devices)")
        if device_type is not None and d.device_type != device_type:
            raise ValueError(f"Unrecognized device: {d!r} is not of device_type "
                             f"{device_type}")
    keep = [d for d in _visible() if device_type is not None and
            d.device_type != device_type]
    new = [d for d in physical if d in keep or d in devices]
    if not any(d.device_type == "CPU" for d in new):
        raise ValueError("set_visible_devices: the CPU must stay visible (xlapy runs every "
                         "graph on it)")
    _state["visible"] = new


def list_logical_devices(device_type=None) -> list:
    """The logical devices of the visible physical devices (one each), by their full
    names (/job:localhost/replica:0/task:0/device:CPU:0, ...)."""
    _check_type(device_type)
    return [_LogicalDevice(f"{_LOGICAL_PREFIX}{d.device_type}:0", d.device_type)
            for d in get_visible_devices(device_type)]


def _gpu(device, what):
    if device not in _physical():
        raise ValueError(f"Unrecognized device: {device!r}")
    if device.device_type not in _GPU_TYPES:
        raise ValueError(f"Cannot {what} memory growth on non-GPU devices")


def get_memory_growth(device):
    """Whether memory growth was set for the GPU `device` (None if never set)."""
    _gpu(device, "get")
    return _state["growth"].get(device.name)


def set_memory_growth(device, enable) -> None:
    """Record memory growth for the GPU `device` (xlapy's gpu backend allocates per
    compiled program; there is no TF allocator to grow)."""
    _gpu(device, "set")
    _state["growth"][device.name] = bool(enable)
