"""JSON errors for the HTTP API: ``{"error": {"code": str, "message": str}}``.

Messages are Chinese: front ends show them to citizens as they are. Every 503
carries ``Retry-After`` (``RETRY_AFTER_SECONDS``): a storage outage (the session
store raising ``StoreUnavailable``, or a Redis connection error from anything
else sharing that Redis) is answered as 503 ``store_unavailable``, never as a 500.
"""

from __future__ import annotations

import logging

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

from si_agent import uploads
from si_agent.errors import RequestError
from si_agent.voice import audio

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5  # what a 503 asks clients to wait before trying again

MESSAGES = {
    400: ("bad_request", "请求格式不正确。"),
    401: ("unauthorized", "请先登录后再试。"),
    403: ("forbidden", "没有权限执行此操作。"),
    404: ("not_found", "请求的地址不存在。"),
    405: ("method_not_allowed", "不支持该请求方法。"),
    409: ("conflict", "您的上一条消息还在处理中，请稍后再发送。"),
    413: ("payload_too_large", "请求内容过大。"),
    415: ("unsupported_media_type", "请使用 JSON 格式（Content-Type: application/json）发送请求。"),
    429: ("rate_limited", "您的操作太频繁了，请稍后再试。"),
    500: ("internal_error", "服务暂时出现问题，请稍后再试。"),
    503: ("unavailable", "服务暂时不可用，请稍后再试。"),
}
# Messages of the specific codes; every citizen-facing API text is in this module.
CODE_MESSAGES = {
    "missing_token": "缺少登录凭证，请先登录。",
    "invalid_token": "登录凭证无效，请重新登录。",
    "token_expired": "登录已过期，请重新登录。",
    "token_revoked": "登录已失效，请重新登录。",
    "token_reused": "登录凭证已被使用过，为保护您的账户已退出登录，请重新登录。",
    "invalid_client": "客户端凭证无效。",
    "invalid_user_id": "user_id 应为1到64位字母、数字或 _ . @ : - 字符。",
    "malformed_json": "请求体应为 JSON 对象。",
    "empty_message": "消息不能为空。",
    "message_not_text": "消息内容应为文字，请输入文字后再发送。",
    "invalid_characters": "消息中有无法识别的字符，请重新输入。",
    "invalid_group_id": "会话编号格式不正确，请刷新页面后重试。",
    "invalid_job": "办理编号格式不正确，请刷新页面后重试。",
    "message_too_long": "消息不能超过{limit}个字，请精简后再发送。",
    "invalid_rating": "评价应为“有帮助”或“没帮助”（rating 取 up 或 down）。",
    "invalid_feedback_turn": "没有找到要评价的这条回答，请刷新页面后再试。",
    "feedback_reason_not_text": "原因应为文字。",
    "feedback_reason_too_long": "原因不能超过{limit}个字，请精简后再提交。",
    "no_conversation": "没有找到这段对话（可能已超过保存期限）。",
    "review_too_long": "说明和正确回复各不能超过{limit}个字。",
    "debug_disabled": "调试信息仅在开发模式下可用。",
    "store_unavailable": "服务暂时不可用，请稍后再试。",
    "job_in_progress": "您的申请正在办理中，办理结果出来前不能重新开始。",
    "admin_required": "需要管理员权限。",
    "staff_required": "需要工作人员权限（staff 或 admin 角色）。",
    "no_knowledge_to_test": "本部署没有可供测试的知识库：{detail}",
    "invalid_audit_query": "查询条件不正确：business 为业务编号，since 为 ISO 时间或 30m、2h、7d "
                           "这样的时长，limit 为 1 到 1000 的整数。",
    "invalid_ticket": "工单号格式不正确。",
    "ticket_not_found": "没有找到这张人工服务工单。",
    "missing_file": "请选择要上传的照片。",
    "no_step_awaited": uploads.NO_STEP,
    "upload_too_large": uploads.TOO_LARGE,
    "too_many_pixels": uploads.TOO_MANY_PIXELS,
    "not_an_image": uploads.NOT_AN_IMAGE,
    "broken_image": uploads.BROKEN_IMAGE,
    "uploads_busy": uploads.BUSY,
    "missing_audio": "请先录制语音再发送。",
    "voice_too_large": audio.TOO_LARGE,
    "voice_too_long": audio.TOO_LONG,
    "not_audio": audio.NOT_AUDIO,
    "broken_audio": audio.BROKEN_AUDIO,
    "no_speech": audio.NO_SPEECH,
    "asr_unavailable": audio.UNAVAILABLE,
    "voice_off": audio.VOICE_OFF,
}


class ApiError(RequestError):
    """An error answered as JSON with ``status``; raise it from any view.

    The message comes from ``CODE_MESSAGES`` (formatted with ``params``), else
    from the status's default.
    """

    def __init__(self, status: int, code: str | None = None, **params: object) -> None:
        default_code, default_message = MESSAGES.get(status, MESSAGES[500])
        self.status = status
        self.code = code or default_code
        template = CODE_MESSAGES.get(self.code, default_message)
        self.message = template.format(**params) if params else template
        super().__init__(f"{status} {self.code}")


def error_response(status: int, code: str | None = None, **params: object):
    return _respond(ApiError(status, code, **params))


def _respond(err: ApiError):
    response = jsonify(error={"code": err.code, "message": err.message})
    response.status_code = err.status
    if err.status == 503:
        response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def register_error_handlers(app: Flask) -> None:
    """Every error becomes JSON; unexpected ones are logged, never shown."""

    @app.errorhandler(ApiError)
    def _api_error(err: ApiError):
        return _respond(err)

    @app.errorhandler(HTTPException)
    def _http_error(err: HTTPException):
        status = err.code or 500
        response = error_response(status if status in MESSAGES else 400)
        if status == 405 and err.valid_methods:
            response.headers["Allow"] = ", ".join(err.valid_methods)
        return response

    for error in redis_outages():
        app.register_error_handler(error, _redis_down)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception):
        log.exception("unhandled error: %s", type(err).__name__)
        return error_response(500)


def redis_outages() -> tuple[type[Exception], ...]:
    """redis-py's errors for a server that cannot be reached (none without the package)."""
    try:
        from redis.exceptions import ConnectionError, TimeoutError
    except ImportError:
        return ()
    return ConnectionError, TimeoutError


def _redis_down(err: Exception):
    # Anything next to the sessions in Redis (step files, jobs) that was not wrapped
    # in StoreUnavailable: the same outage, the same answer.
    log.error("Redis unavailable: %s: %s", type(err).__name__, err)
    return error_response(503, "store_unavailable")
