"""JVP rule of primitives/conv.py: a convolution is bilinear in (lhs, rhs)."""

from __future__ import annotations

from xlapy.frontend.jvp.rules import bilinear
from xlapy.frontend.primitives.conv import conv_general_dilated_p

bilinear(conv_general_dilated_p)
