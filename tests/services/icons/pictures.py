"""Pictures for the icon tests, made with Pillow in memory."""

from __future__ import annotations

import io

from PIL import Image


def picture(fmt: str = "PNG", size=(300, 200), color="red", **save) -> bytes:
    out = io.BytesIO()
    mode = "RGB" if fmt == "JPEG" else "RGBA"
    Image.new(mode, size, color).save(out, format=fmt, **save)
    return out.getvalue()


def gif_two_frames() -> bytes:
    out = io.BytesIO()
    first, second = Image.new("RGB", (50, 50), "blue"), Image.new("RGB", (50, 50), "yellow")
    first.save(out, format="GIF", save_all=True, append_images=[second])
    return out.getvalue()


def bomb() -> bytes:
    """A small PNG whose header claims 5,000 x 5,000 pixels (a mode-1 image packs
    well: the file stays far below 1 MiB)."""
    out = io.BytesIO()
    Image.new("1", (5_000, 5_000), 0).save(out, format="PNG")
    return out.getvalue()
