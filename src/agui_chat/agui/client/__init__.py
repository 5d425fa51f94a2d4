"""``AGUIChatClient``: any AG-UI agent as a ``ChatClient`` (transport, request building,
events to updates, resume, and the thread reducer). Its public names live in
``agui_chat.agui``."""
