"""Reading citizens' photos: ID cards (``idcard``) and, later, faces.

Nothing heavy is imported here: the OCR engine loads on first use inside the
module that needs it (``pip install 'si_agent[ocr]'``).
"""
