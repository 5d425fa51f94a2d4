"""``AGUIServer``: any ``ChatClient`` hosted as an AG-UI endpoint (an ASGI application), with
signed interrupts for approvals and questions and checked resumes. Needs the ``[server]``
extra. Its public names live in ``agui_chat.agui``."""
