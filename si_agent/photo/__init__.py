"""Checks on photos a citizen sends during a business (the photo steps).

``idcard`` reads the portrait side of an ID card (``pip install 'si_agent[ocr]'``);
``face`` verifies that a selfie shows the card holder (``pip install 'si_agent[photo]'``).
Submodules import their heavy libraries (OpenCV, onnxruntime, numpy) on first use,
so importing this package costs nothing.
"""
