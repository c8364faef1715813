"""Synthetic resident ID cards (居民身份证) for OCR tests and benchmarks.

Renders both sides of a card with PIL and Debian's ``fonts-noto-cjk``
(``apt-get install fonts-noto-cjk``): the portrait side (姓名, 性别, 民族, 出生,
住址, 公民身份号码 and a placeholder photo on the right) and the national-emblem
side (中华人民共和国, 居民身份证, 签发机关, 有效期限). ID numbers carry a valid
GB 11643 check character unless asked otherwise. Every card is laid on a
coloured "table" so that the card edges are visible, as in a real photo.
``perturb`` applies the distortions of a hand-held phone photo.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageFont, ImageOps

from si_agent.validators.idcard import check_char

FONT_PATHS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
)
_SC_FACE = 2  # the .ttc holds JP, KR, SC, TC, HK faces: cards print simplified glyphs
CARD_SIZE = (856, 540)  # 85.6 mm x 54 mm at 10 px/mm
PHOTO_BOX = (570, 60, 800, 360)  # the portrait on the card, in card pixels

_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董潘袁蔡蒋余于杜叶程魏苏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方邹熊孟秦白江阎薛尹段雷黎史龙陶贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红飞鹏辉建国文斌宇浩凯丹玲志海亮林波宁新晶燕梅雪琳晨阳东鑫春雷俊峰婷颖慧佳欣怡子轩思雨博文天佑梓涵"
_ETHNICITIES = ("汉", "汉", "汉", "回", "满", "蒙古", "壮", "藏", "维吾尔", "苗", "彝", "土家", "朝鲜", "侗", "瑶", "白")
# (region code, address prefix): real county-level codes with their names.
_REGIONS = (
    ("330106", "浙江省杭州市西湖区"),
    ("330102", "浙江省杭州市上城区"),
    ("310104", "上海市徐汇区"),
    ("110105", "北京市朝阳区"),
    ("440305", "广东省深圳市南山区"),
    ("320102", "江苏省南京市玄武区"),
    ("510107", "四川省成都市武侯区"),
    ("420106", "湖北省武汉市武昌区"),
    ("370202", "山东省青岛市市南区"),
    ("610113", "陕西省西安市雁塔区"),
    ("430104", "湖南省长沙市岳麓区"),
    ("350203", "福建省厦门市思明区"),
)
_STREETS = ("文三路", "人民路", "解放路", "中山路", "建设路", "和平街", "新华路", "青年路", "长江路", "学府路", "东风路", "光明街")
_PLACES = ("幸福小区", "阳光花园", "翠苑", "金色家园", "绿城公寓", "锦绣苑", "华府", "梧桐里")
_AUTHORITIES = ("杭州市公安局西湖分局", "上海市公安局徐汇分局", "北京市公安局朝阳分局", "深圳市公安局南山分局")
_LABEL = (40, 96, 156)
_INK = (20, 20, 20)


@dataclass(frozen=True)
class Card:
    """What is printed on a card; ``address`` is one string, wrapped when drawn."""

    name: str
    sex: str
    ethnicity: str
    birth: date
    address: str
    id_number: str
    authority: str = "杭州市公安局西湖分局"
    valid_from: date = date(2016, 5, 20)


def id_number(region: str, birth: date, sequence: int) -> str:
    """A number with a valid check character; ``sequence`` odd is 男."""
    first17 = f"{region}{birth:%Y%m%d}{sequence:03d}"
    return first17 + check_char(first17)


def random_card(rng: random.Random) -> Card:
    """A plausible card with varied name, sex, ethnicity, birth date and address."""
    region, prefix = rng.choice(_REGIONS)
    birth = date(1950, 1, 1) + timedelta(days=rng.randrange(365 * 55))
    sex = rng.choice("男女")
    sequence = rng.randrange(1, 499) * 2 + (1 if sex == "男" else 0)
    name = rng.choice(_SURNAMES) + "".join(rng.choice(_GIVEN) for _ in range(rng.choice((1, 2, 2))))
    address = (f"{prefix}{rng.choice(_STREETS)}{rng.randrange(1, 300)}号"
               f"{rng.choice(_PLACES)}{rng.randrange(1, 30)}幢{rng.randrange(1, 30)}0{rng.randrange(1, 5)}室")
    return Card(name=name, sex=sex, ethnicity=rng.choice(_ETHNICITIES), birth=birth,
                address=address, id_number=id_number(region, birth, sequence),
                authority=rng.choice(_AUTHORITIES),
                valid_from=date(2010, 1, 1) + timedelta(days=rng.randrange(365 * 12)))


def with_bad_checksum(card: Card) -> Card:
    """The same card with a wrong last character."""
    wrong = "0" if card.id_number[-1] != "0" else "1"
    return replace(card, id_number=card.id_number[:-1] + wrong)


def font_path() -> Path:
    """The first installed Noto CJK font; a clear error says how to install it."""
    for path in FONT_PATHS:
        if Path(path).exists():
            return Path(path)
    raise FileNotFoundError("no Noto CJK font: apt-get install -y fonts-noto-cjk")


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font_path()), size, index=_SC_FACE)


def _blank_card(tint: tuple[int, int, int]) -> Image.Image:
    """A light card with a soft gradient and guilloche-like lines, nowhere saturated."""
    w, h = CARD_SIZE
    card = Image.new("RGB", CARD_SIZE, tint)
    draw = ImageDraw.Draw(card)
    for y in range(0, h, 6):
        shade = tuple(max(0, c - 8 + (y * 10) // h) for c in tint)
        draw.line([(0, y), (w, y + 40)], fill=shade, width=1)
    mask = Image.new("L", CARD_SIZE, 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, w - 1, h - 1], radius=28, fill=255)
    card.putalpha(mask)
    return card


def _spaced(draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, size: int,
            spacing: int, fill: tuple[int, int, int]) -> None:
    x, y = xy
    font = _font(size)
    for char in text:
        draw.text((x, y), char, font=font, fill=fill)
        x += int(font.getlength(char)) + spacing


def _photo(card: Image.Image, face: Image.Image | None = None) -> None:
    """The portrait: ``face`` (a head-and-shoulders photo, scaled and centred to
    fill the box), or a grey placeholder of a head and shoulders."""
    x0, y0, x1, y1 = PHOTO_BOX
    w, h = x1 - x0, y1 - y0
    if face is not None:
        card.paste(ImageOps.fit(face.convert("RGB"), (w, h)), (x0, y0))
        return
    photo = Image.new("RGB", (w, h), (168, 174, 182))
    draw = ImageDraw.Draw(photo)
    draw.ellipse([w // 2 - 62, 50, w // 2 + 62, 205], fill=(120, 112, 108))
    draw.ellipse([w // 2 - 110, 215, w // 2 + 110, h + 140], fill=(70, 72, 80))
    card.paste(photo, (x0, y0))


def wrap(text: str, width: int = 11) -> list[str]:
    """The address as printed: ``width`` characters a line."""
    return [text[i:i + width] for i in range(0, len(text), width)]


def render_portrait_card(card: Card, face: Image.Image | None = None) -> Image.Image:
    """The portrait side alone, RGBA with rounded corners; ``face`` is the holder's photo."""
    image = _blank_card((236, 240, 236))
    draw = ImageDraw.Draw(image)
    label, value = _font(26), _font(30)
    draw.text((50, 58), "姓名", font=label, fill=_LABEL)
    _spaced(draw, (140, 53), card.name, 32, 4, _INK)
    draw.text((50, 120), "性别", font=label, fill=_LABEL)
    draw.text((140, 116), card.sex, font=value, fill=_INK)
    draw.text((250, 120), "民族", font=label, fill=_LABEL)
    draw.text((340, 116), card.ethnicity, font=value, fill=_INK)
    draw.text((50, 182), "出生", font=label, fill=_LABEL)
    b = card.birth
    draw.text((140, 178), str(b.year), font=value, fill=_INK)
    draw.text((222, 182), "年", font=label, fill=_LABEL)
    draw.text((266, 178), str(b.month), font=value, fill=_INK)
    draw.text((310, 182), "月", font=label, fill=_LABEL)
    draw.text((354, 178), str(b.day), font=value, fill=_INK)
    draw.text((398, 182), "日", font=label, fill=_LABEL)
    draw.text((50, 244), "住址", font=label, fill=_LABEL)
    for i, line in enumerate(wrap(card.address)):
        draw.text((140, 240 + 40 * i), line, font=value, fill=_INK)
    draw.text((50, 440), "公民身份号码", font=label, fill=_LABEL)
    _spaced(draw, (270, 434), card.id_number, 34, 10, _INK)
    _photo(image, face)
    return image


def render_back_card(card: Card) -> Image.Image:
    """The national-emblem side alone, RGBA with rounded corners."""
    image = _blank_card((232, 238, 242))
    draw = ImageDraw.Draw(image)
    draw.ellipse([60, 40, 200, 180], fill=(200, 60, 50))
    draw.ellipse([95, 75, 165, 145], fill=(230, 190, 60))
    draw.text((300, 70), "中华人民共和国", font=_font(40), fill=_INK)
    _spaced(draw, (290, 150), "居民身份证", 56, 14, _INK)
    draw.text((150, 380), "签发机关", font=_font(26), fill=_INK)
    draw.text((290, 376), card.authority, font=_font(30), fill=_INK)
    draw.text((150, 440), "有效期限", font=_font(26), fill=_INK)
    until = card.valid_from.replace(year=card.valid_from.year + 20)
    draw.text((290, 436), f"{card.valid_from:%Y.%m.%d}-{until:%Y.%m.%d}", font=_font(30), fill=_INK)
    return image


def on_table(card: Image.Image, margin: int = 80,
             table: tuple[int, int, int] = (96, 78, 60)) -> Image.Image:
    """The card photographed lying on a table, RGB."""
    w, h = card.size
    photo = Image.new("RGB", (w + 2 * margin, h + 2 * margin), table)
    photo.paste(card, (margin, margin), card)
    return photo


def portrait_photo(card: Card, face: Image.Image | None = None) -> Image.Image:
    return on_table(render_portrait_card(card, face))


def back_photo(card: Card) -> Image.Image:
    return on_table(render_back_card(card))


def add_glare(image: Image.Image, center: tuple[float, float] = (0.35, 0.45),
              radius: float = 0.2) -> Image.Image:
    """A saturated white blob (a lamp's reflection) at relative ``center``."""
    out = image.copy()
    w, h = out.size
    r = int(radius * min(w, h))
    cx, cy = int(center[0] * w), int(center[1] * h)
    mask = Image.new("L", out.size, 0)
    ImageDraw.Draw(mask).ellipse([cx - r, cy - r, cx + r, cy + r], fill=255)
    halo = mask.filter(ImageFilter.GaussianBlur(r // 4))
    out.paste((255, 255, 255), (0, 0), halo)
    out.paste((255, 255, 255), (0, 0), mask)
    return out


def perturb(image: Image.Image, rng: random.Random) -> Image.Image:
    """A phone photo: rotation ±5°, perspective, brightness ±30 %, blur (each drawn at random)."""
    out = image
    if rng.random() < 0.7:
        w, h = out.size
        d = 0.04
        quad = [(rng.uniform(0, d) * w, rng.uniform(0, d) * h),
                (rng.uniform(0, d) * w, (1 - rng.uniform(0, d)) * h),
                ((1 - rng.uniform(0, d)) * w, (1 - rng.uniform(0, d)) * h),
                ((1 - rng.uniform(0, d)) * w, rng.uniform(0, d) * h)]
        out = out.transform(out.size, Image.Transform.QUAD, [c for p in quad for c in p],
                             Image.Resampling.BILINEAR, fillcolor=(96, 78, 60))
    out = out.rotate(rng.uniform(-5, 5), Image.Resampling.BILINEAR, expand=True,
                     fillcolor=(96, 78, 60))
    out = ImageEnhance.Brightness(out).enhance(rng.uniform(0.7, 1.3))
    if rng.random() < 0.5:
        out = out.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 1.5)))
    return out


def encode(image: Image.Image, fmt: str = "PNG", quality: int = 90) -> bytes:
    """The image as file bytes, as a citizen would upload them."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format=fmt, quality=quality)
    return buffer.getvalue()
