"""Photos for the photo-step tests: synthetic ID cards carrying real faces.

The faces come from the test dependencies (scikit-image's astronaut, matplotlib's
Grace Hopper, scikit-image's cat); the cards are drawn with Noto CJK.
"""

from __future__ import annotations

from datetime import date

import pytest

from si_agent.testing import cards, faces

# The demo backend's person 张伟 (si_agent/demo_backend/seed.py).
ZHANG_WEI = cards.Card(name="张伟", sex="男", ethnicity="汉", birth=date(1963, 3, 15),
                       address="浙江省杭州市西湖区文三路100号幸福小区3幢2单元501室",
                       id_number="330122196303150178")


@pytest.fixture(scope="session")
def card_photo() -> bytes:
    """张伟's ID card, portrait side, with the astronaut's photo on it."""
    return faces.jpeg(cards.portrait_photo(ZHANG_WEI, faces.astronaut_head()))


@pytest.fixture(scope="session")
def back_photo() -> bytes:
    return faces.jpeg(cards.back_photo(ZHANG_WEI))


@pytest.fixture(scope="session")
def selfie() -> bytes:
    """The card holder herself: another photo of the astronaut (brighter, JPEG 70)."""
    from PIL import ImageEnhance

    return faces.jpeg(ImageEnhance.Brightness(faces.astronaut()).enhance(1.15), quality=70)


@pytest.fixture(scope="session")
def stranger() -> bytes:
    return faces.jpeg(faces.hopper())


@pytest.fixture(scope="session")
def cat() -> bytes:
    return faces.jpeg(faces.cat())
