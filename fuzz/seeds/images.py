"""Small images in every container and pixel form stb_image decodes, as seeds for image_fuzzer: made with
Pillow from a downscaled crop of the astronaut photo that Debian's python3-skimage ships (or a generated
gradient when it is missing)."""
import io
import os

import numpy as np
from PIL import Image

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"


def _base():
    if os.path.exists(ASTRONAUT):
        return Image.open(ASTRONAUT).convert("RGB").crop((160, 40, 352, 232)).resize((24, 24))
    y, x = np.mgrid[0:24, 0:24]
    return Image.fromarray(np.stack([x * 10, y * 10, (x + y) * 5], -1).astype(np.uint8))


def _save(image, fmt, **kw):
    buf = io.BytesIO()
    image.save(buf, fmt, **kw)
    return buf.getvalue()


def _psd(image):
    """A Photoshop file, which Pillow reads but does not write: header, three empty sections, raw planes."""
    w, h = image.size
    planes = np.asarray(image).transpose(2, 0, 1).tobytes()
    header = b"8BPS" + (1).to_bytes(2, "big") + bytes(6) + (3).to_bytes(2, "big") + h.to_bytes(4, "big") + \
        w.to_bytes(4, "big") + (8).to_bytes(2, "big") + (3).to_bytes(2, "big")
    return header + bytes(12) + (0).to_bytes(2, "big") + planes


def images():
    """(name, bytes) of every seed."""
    rgb = _base()
    grey = rgb.convert("L")
    yield "rgb.png", _save(rgb, "PNG")
    yield "grey.png", _save(grey, "PNG")
    yield "rgba.png", _save(rgb.convert("RGBA"), "PNG")
    yield "palette.png", _save(rgb.convert("P", palette=Image.ADAPTIVE, colors=16), "PNG")
    yield "optimized.png", _save(rgb, "PNG", optimize=True)
    yield "grey16.png", _save(Image.fromarray((np.asarray(grey).astype(np.uint16) * 257)), "PNG")
    yield "bilevel.png", _save(grey.convert("1"), "PNG")
    yield "baseline.jpg", _save(rgb, "JPEG", quality=80)
    yield "progressive.jpg", _save(rgb, "JPEG", quality=80, progressive=True)
    yield "grey.jpg", _save(grey, "JPEG", quality=80)
    yield "subsampled.jpg", _save(rgb.resize((17, 13)), "JPEG", quality=60, subsampling=2)
    yield "rgb.bmp", _save(rgb, "BMP")
    yield "palette.bmp", _save(rgb.convert("P", palette=Image.ADAPTIVE, colors=16), "BMP")
    yield "rgba.bmp", _save(rgb.convert("RGBA"), "BMP")
    yield "rgb.gif", _save(rgb.convert("P", palette=Image.ADAPTIVE, colors=32), "GIF")
    yield "rgb.tga", _save(rgb, "TGA")
    yield "rle.tga", _save(rgb, "TGA", compression="tga_rle")
    yield "rgb.ppm", _save(rgb, "PPM")
    yield "grey.pgm", _save(grey, "PPM")
    yield "raw.psd", _psd(rgb)
    # Radiance HDR, which Pillow does not write: the header and uncompressed RGBE scanlines.
    rgbe = np.zeros((8, 8, 4), np.uint8)
    rgbe[..., :3] = np.asarray(rgb.resize((8, 8)))
    rgbe[..., 3] = 128
    yield "flat.hdr", b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 8 +X 8\n" + rgbe.tobytes()
