"""``si-agent chat``: the assistant in the terminal.

    scripts/run.sh chat [--user ID] [--engine rules] [--store sqlite] [--quiet] [--trace]

The conversation is all the terminal shows: logs go to
``$SI_DATA_DIR/logs/chat.log`` (named once at start); what goes wrong while the
assistant starts (a business not available online, a missing requirement) is
also shown then, once. Under each reply a status line says where the dialogue
stands in the citizen's words (``[状态 填写信息 | 业务 养老金查询 | … | 等待 身份证号]``).

It runs beside a server on the same data directory: sessions and the audit log
are SQLite, which two processes share, but a Milvus Lite knowledge base is held
by one process only (its ``LOCK`` file). When another process holds it, chat
answers from a private copy, made in a temporary directory and removed at the
end; if no copy can be made, it says once that knowledge answers are
unavailable and the business dialogues go on.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import re
import shutil
import sys
import tempfile
import unicodedata
import uuid
from collections.abc import Iterator
from pathlib import Path

from si_agent import replies
from si_agent.config.settings import Settings

log = logging.getLogger(__name__)

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``chat`` to the ``si-agent`` sub-commands."""
    chat = sub.add_parser(
        "chat", help="chat in the terminal",
        description="Chat with the assistant in the terminal, on the same businesses, "
                    "sessions and knowledge base as the web page; logs go to "
                    "$SI_DATA_DIR/logs/chat.log. Type /quit to leave, /reset to start "
                    "again, /upload PATH to send a photo, /voice PATH to send a spoken "
                    "message (a WAV, WebM, Ogg, MP3 or M4A file; SI_ASR).")
    chat.add_argument("--user", default=None,
                      help="session/user id, to continue a conversation (default: a new one)")
    chat.add_argument("--engine", default=None,
                      help="intent engine: rules, llm, hybrid, auto (default: SI_ENGINE or rules)")
    chat.add_argument("--store", default=None,
                      help="session store: memory, sqlite, redis, auto (default: SI_SESSION_STORE)")
    chat.add_argument("--quiet", action="store_true", help="hide the status line under each reply")
    chat.add_argument("--trace", action="store_true",
                      help="show each turn's decision record (engine, tools, calls, reason)")
    chat.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from si_agent.app import build_controller

    if args.store:
        settings = settings.replace(session_store=args.store)
    logfile = _log_to_file(settings)
    print(f"日志写入 {logfile}", file=sys.stderr)
    with _knowledge_beside_a_server(settings) as settings:
        with _start_up_warnings_shown():
            controller = build_controller(settings, engine=args.engine)
            _prepare_knowledge(controller)
        return _converse(controller, settings, args)


_COMMANDS = "输入 /quit 退出，/reset 重新开始，/upload 照片路径 上传照片，/voice 录音路径 发送语音"
_UNKNOWN_COMMAND = re.compile(r"/[a-z]+")  # "/foo": a typo of a command, not a message


def _command(line: str) -> str:
    """``line`` as a command would be typed: "／QUIT" and "/ quit" (a Chinese input
    method's full-width slash, a space after it) are "/quit"; other lines as they are."""
    text = unicodedata.normalize("NFKC", line).strip()
    if not text.startswith("/"):
        return line.strip()
    word, _, rest = text[1:].lstrip().partition(" ")
    return f"/{word.lower()} {rest}".strip() if word.isascii() else line.strip()


def _converse(controller, settings: Settings, args: argparse.Namespace) -> int:
    user = args.user or f"cli-{uuid.uuid4().hex[:8]}"
    print(f"社保智能帮办（{_COMMANDS}）")
    print(controller.handle(user, "你好").reply)
    while True:
        try:
            line = input("您> ")
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        command = _command(line)
        if command in ("/quit", "/exit"):
            return 0
        if command == "/reset":
            controller.reset(user)
            print("助手> 已重新开始。")
            continue
        if command in ("/help", "/?"):
            print(f"助手> {_COMMANDS}")
            continue
        if command.split(" ", 1)[0] == "/upload":
            turn = _upload(controller, settings, user, command[len("/upload"):].strip())
            if turn is None:
                continue
        elif command.split(" ", 1)[0] == "/voice":
            turn = _voice(controller, settings, user, command[len("/voice"):].strip())
            if turn is None:
                continue
        elif _UNKNOWN_COMMAND.fullmatch(command):
            print(f"助手> 没有“{command}”这个命令。{_COMMANDS}")
            continue
        else:
            turn = controller.handle(user, line)
        print(f"助手> {turn.reply}")
        if not args.quiet:
            print(status_line(turn, controller.catalog))
        if args.trace:
            session = controller.store.load(user)
            if session and session.memory:
                print(_trace(session.memory[-1]))


def _log_to_file(settings: Settings) -> Path:
    """Send every log record to ``$SI_DATA_DIR/logs/chat.log`` (at the level main set)."""
    folder = settings.data_dir / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "chat.log"
    root = logging.getLogger()
    level = root.level
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return path.resolve()


@contextlib.contextmanager
def _start_up_warnings_shown() -> Iterator[None]:
    """Warnings while the assistant starts go to the terminal too (then only to the log)."""
    shown = logging.StreamHandler(sys.stderr)
    shown.setLevel(logging.WARNING)
    shown.setFormatter(logging.Formatter("warning: %(message)s"))
    logging.getLogger().addHandler(shown)
    try:
        yield
    finally:
        logging.getLogger().removeHandler(shown)


@contextlib.contextmanager
def _knowledge_beside_a_server(settings: Settings) -> Iterator[Settings]:
    """``settings``, with a private copy of the Milvus Lite knowledge base when another
    process holds it (the copy is removed at the end); without knowledge answers when
    no copy can be made."""
    from rag.store import MILVUS_LOCK, lite_held

    location = Path(settings.kb_location)
    if settings.knowledge != "milvus" or "://" in settings.kb_location or not lite_held(location):
        yield settings
        return
    with tempfile.TemporaryDirectory(prefix="si-agent-chat-") as scratch:
        copy = Path(scratch) / location.name
        try:
            shutil.copytree(location, copy, ignore=shutil.ignore_patterns(MILVUS_LOCK))
        except OSError as exc:
            log.warning("cannot copy the knowledge base %s: %s", location, exc)
            print(f"知识库 {location} 正由另一个进程（如正在运行的服务）使用，本次对话暂不能回答政策问题；"
                  "业务办理不受影响。", file=sys.stderr)
            yield settings.replace(knowledge="none")
            return
        print(f"知识库 {location} 正由另一个进程（如正在运行的服务）使用，本次对话使用它的副本。",
              file=sys.stderr)
        log.info("knowledge base %s is held by another process; using a copy in %s",
                 location, copy)
        yield settings.replace(kb_uri=str(copy))


def _prepare_knowledge(controller) -> None:
    """Open the knowledge base now (building it on a fresh machine), not on the first question."""
    from si_agent.knowledge import NoKnowledge, behind

    if isinstance(behind(controller.knowledge), NoKnowledge):  # no knowledge base to open
        return
    print("正在准备知识库……", file=sys.stderr)
    result = controller.knowledge.status()
    if not result.get("ok"):
        log.warning("knowledge base unavailable: %s; business dialogues still work",
                    result.get("detail"))


def _upload(controller, settings: Settings, user: str, path: str):
    """``/upload PATH``: the photo checked like the API does; None after printing why not."""
    from si_agent.errors import NoStepAwaited
    from si_agent.uploads import NO_STEP, UploadRejected, clean_image

    if not path:
        print("助手> 请在 /upload 后写照片的路径，例如：/upload ~/身份证.jpg")
        return None
    try:
        with open(os.path.expanduser(path), "rb") as f:
            data = f.read(settings.upload_max_bytes + 1)
        image = clean_image(data, max_bytes=settings.upload_max_bytes,
                            max_pixels=settings.upload_max_pixels)
        return controller.upload(user, image)
    except OSError:
        print(f"助手> 找不到或打不开这个文件：{path}")
    except UploadRejected as err:
        print("助手> " + err.message)
    except NoStepAwaited:
        print("助手> " + NO_STEP)
    return None


def _voice(controller, settings: Settings, user: str, path: str):
    """``/voice PATH``: a recorded message heard as the API hears it (``voice.listen``)
    and run as a spoken turn; None after printing why not."""
    from si_agent.errors import UploadRejected
    from si_agent.voice import RecognizerUnavailable, create_recognizer
    from si_agent.voice.audio import NO_SPEECH, UNAVAILABLE, VOICE_OFF
    from si_agent.voice.listen import listen

    if not path:
        print("助手> 请在 /voice 后写录音文件的路径，例如：/voice ~/录音.wav")
        return None
    recognizer = _recognizer(settings, create_recognizer)
    if recognizer is None:
        print("助手> " + VOICE_OFF)
        return None
    try:
        with open(os.path.expanduser(path), "rb") as f:
            data = f.read(settings.voice_max_bytes + 1)
        text = listen(recognizer, data, controller.catalog, controller.store.load(user),
                      max_bytes=settings.voice_max_bytes, max_seconds=settings.voice_max_seconds)
    except OSError:
        print(f"助手> 找不到或打不开这个文件：{path}")
        return None
    except UploadRejected as err:
        print("助手> " + err.message)
        return None
    except RecognizerUnavailable:
        print("助手> " + UNAVAILABLE)
        return None
    if not text:
        print("助手> " + NO_SPEECH)
        return None
    turn = controller.handle(user, text, spoken=True)
    print(f"（听到：{turn.message}）")
    return turn


@functools.lru_cache(maxsize=1)
def _recognizer(settings: Settings, create):
    """The terminal chat's recogniser, made on the first /voice (a local model loads once)."""
    return create(settings)


def status_line(turn, catalog) -> str:
    """Where the dialogue stands, in labels a citizen reads (never internal names)."""
    parts = [f"[状态 {replies.CHAT_STATES.get(turn.state, turn.state)}"]
    if turn.business:
        parts.append(f"业务 {turn.business.name}")
    if turn.fields:
        marks = {"collected": "✓", "pending": "…", "invalid": "✗", "failed": "!"}
        parts.append(" ".join(
            f"{marks.get(f.status, '?')}{f.label}{'=' + f.value if f.value else ''}"
            for f in turn.fields
        ))
    awaited = _awaited(turn, catalog)
    if awaited:
        parts.append(f"等待 {awaited}")
    return " | ".join(parts) + "]"


def _awaited(turn, catalog) -> str | None:
    """The label of what the dialogue waits for: a field, a step, a confirmation."""
    key = turn.awaiting
    if not key:
        return None
    if key in replies.CHAT_AWAITING:
        return replies.CHAT_AWAITING[key]
    for f in turn.fields:
        if f.key == key:
            return f.label
    if turn.step is not None and turn.step.id == key:
        return turn.step.label
    if turn.theme is not None and turn.theme.id == key:
        return turn.theme.label
    business = catalog.get(turn.business.id) if turn.business else None
    if business is not None:
        if key in business.field_keys:
            return business.field(key).label
        for step in business.steps:
            if step.id == key:
                return step.label
    return replies.CHAT_AWAITING_OTHER


def _trace(record) -> str:
    """A decision record, one line each, for ``chat --trace``."""
    lines = [f"  ⤷ engine {record.engine}: {record.state_before} → {record.state_after}; "
             f"offered {', '.join(record.offered)}",
             f"    rule: {record.rule} ({record.confidence:.2f}); reason: {record.reason}"]
    if record.usage is not None:
        lines.append(f"    usage: {record.usage.model_calls} model call(s), "
                     f"{record.usage.prompt_tokens}+{record.usage.completion_tokens} tokens")
    lines += [f"    call {c.name}({c.arguments}) → {c.outcome}" for c in record.calls]
    return "\n".join(lines)
