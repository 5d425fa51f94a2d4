"""``AGUIChatClient``: any AG-UI agent as a ``ChatClient`` (transport and SSE framing, request
building, the decoding pipeline with chunk expansion and stream verification, events to
updates, resume, and the thread reducer). Its public names live in ``agui_chat.agui``."""
