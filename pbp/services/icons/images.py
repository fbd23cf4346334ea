"""An uploaded picture made into an icon (issue #33 item 1): PNG, JPEG, WebP or the first
frame of a GIF, at most 1 MiB, re-encoded by Pillow to a 100 x 100 PNG with no metadata.

pbp never stores or serves the uploaded bytes: only the PNG it drew itself, so no EXIF
(a phone's GPS position), comment or colour profile of the original survives, and a file
that is something else under an image's name never reaches a reader. A picture whose
header promises more pixels than `MAX_PIXELS` is refused before it is unpacked: a small
file can declare an enormous image (a decompression bomb) and take the server's memory.
"""

from __future__ import annotations

import hashlib
import io
import warnings

from PIL import Image, ImageOps, UnidentifiedImageError

from pbp.errors import UserError

MAX_BYTES = 1024 * 1024
SIZE = 100
MAX_PIXELS = 4096 * 4096  # a large photo; far below what would exhaust a worker
FORMATS = ("PNG", "JPEG", "WEBP", "GIF")


class IconRefused(UserError):
    """The upload cannot be an icon; the message says why."""


def make_icon(data: bytes) -> tuple[bytes, str]:
    """(the icon's PNG, its SHA-256 in hex) from the uploaded bytes, or IconRefused."""
    if not data:
        raise IconRefused("choose a picture to upload")
    if len(data) > MAX_BYTES:
        raise IconRefused(
            f"the picture is {len(data) / 1024 / 1024:.1f} MiB; an icon may be at most 1 MiB"
        )
    with warnings.catch_warnings():
        # Pillow warns (DecompressionBombWarning) before it refuses; the check below refuses
        # at a lower size with a reason, so the warning is not an error here.
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data), formats=FORMATS) as image:
                return _redrawn(image)
        except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
            if isinstance(exc, Image.DecompressionBombError):
                raise _bomb(None) from exc
            raise IconRefused("this is not a PNG, JPEG, WebP or GIF picture") from exc
        except (OSError, SyntaxError, ValueError) as exc:
            raise IconRefused("the picture is damaged and cannot be read") from exc


def _bomb(size: tuple[int, int] | None) -> IconRefused:
    said = f" ({size[0]} x {size[1]} pixels)" if size else ""
    return IconRefused(
        f"the picture claims to be too large to unpack{said}: at most {MAX_PIXELS:,} "
        "pixels (a small file claiming a huge picture is a decompression bomb)"
    )


def _redrawn(image: Image.Image) -> tuple[bytes, str]:
    width, height = image.size  # from the header: nothing is unpacked yet
    if width * height > MAX_PIXELS:
        raise _bomb((width, height))
    image.seek(0)  # a GIF's first frame
    image = ImageOps.exif_transpose(image)  # a phone photo stands as it was taken
    icon = ImageOps.fit(image.convert("RGBA"), (SIZE, SIZE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    icon.save(out, format="PNG", optimize=True)  # no info, EXIF or profile is passed on
    png = out.getvalue()
    return png, hashlib.sha256(png).hexdigest()
