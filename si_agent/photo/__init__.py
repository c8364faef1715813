"""Checks on photos a citizen sends during a business (the photo steps).

Submodules import their heavy libraries (OpenCV, numpy) on first use, so
importing this package costs nothing: ``from si_agent.photo.face import
LocalFaceVerifier`` needs the ``photo`` extra (``pip install 'si_agent[photo]'``).
"""
