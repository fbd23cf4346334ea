"""Issue #33 item 1: "Uploads are PNG, JPEG, WebP, or the first frame of a GIF, at most 1
MiB. Pillow re-encodes them to 100 x 100 with the metadata stripped, and refuses
decompression bombs with a reason." """

from __future__ import annotations

import io

import pytest
from PIL import Image

from pbp.services.icons.images import IconRefused, make_icon
from tests.services.icons.pictures import bomb, gif_two_frames, picture


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "GIF"])
def test_each_format_becomes_a_100_pixel_png(fmt):
    png, digest = make_icon(picture(fmt))
    icon = Image.open(io.BytesIO(png))
    assert icon.format == "PNG" and icon.size == (100, 100) and len(digest) == 64


def test_the_metadata_is_gone():
    exif = Image.Exif()
    exif[0x010E] = "MKEXIFSECRET"  # ImageDescription
    exif[0x8825] = {2: (51.0, 30.0, 0.0)}  # a GPS position
    jpeg = picture("JPEG", exif=exif.tobytes(), comment=b"MKCOMMENT")
    png, _ = make_icon(jpeg)
    icon = Image.open(io.BytesIO(png))
    assert icon.info == {} and not icon.getexif()
    assert b"MKEXIFSECRET" not in png and b"MKCOMMENT" not in png


def test_a_gif_gives_its_first_frame():
    png, _ = make_icon(gif_two_frames())
    r, g, b, _a = Image.open(io.BytesIO(png)).convert("RGBA").getpixel((50, 50))
    assert b > 200 and r < 50  # blue, not the yellow second frame


def test_more_than_one_mebibyte_is_refused():
    with pytest.raises(IconRefused, match="at most 1 MiB"):
        make_icon(b"\x89PNG" + b"0" * (1024 * 1024))


def test_a_decompression_bomb_is_refused_with_the_reason():
    data = bomb()
    assert len(data) < 1024 * 1024
    with pytest.raises(IconRefused, match="decompression bomb"):
        make_icon(data)


@pytest.mark.parametrize(
    "data", [b"", b"GIF89a not really", b"<svg xmlns='http://www.w3.org/2000/svg'/>"]
)
def test_anything_else_is_refused(data):
    with pytest.raises(IconRefused):
        make_icon(data)


def test_a_bmp_is_not_taken():
    out = io.BytesIO()
    Image.new("RGB", (10, 10)).save(out, format="BMP")
    with pytest.raises(IconRefused, match="not a PNG, JPEG, WebP or GIF"):
        make_icon(out.getvalue())
