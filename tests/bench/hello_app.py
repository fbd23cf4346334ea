"""The baseline for test_bench_web.py: the smallest Flask app, served the same way."""

from flask import Flask

app = Flask(__name__)


@app.get("/")
def hello() -> str:
    return "Hello, World!"
