"""Settings, from the environment (prefix ``RECAPS_``) and the ``.env`` file beside the app."""
from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class LLMSettings(BaseModel):
    """The models (``RECAPS_LLM__SUMMARY_MODEL``...)."""

    summary_model: str = "mistralai/mistral-small-3.2-24b-instruct"
    actions_model: str = "gpt-4o-mini"
    # the action-items call through the OpenAI client; the summary call's timeout is in llm.py
    actions_timeout_s: float = 120.0
    max_tokens: int = 600


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RECAPS_", env_file=".env", env_nested_delimiter="__",
                                      extra="ignore")

    # shared with the other services of the deployment, so no prefix
    database_url: str = Field("postgresql+psycopg://recaps:recaps@localhost:5432/recaps", alias="DATABASE_URL")
    db_pool_size: int = 5
    db_pool_timeout_s: float = 30.0
    redis_url: str = "redis://localhost:6379/0"
    openrouter_key: SecretStr = SecretStr("")
    openai_api_key: SecretStr = Field(SecretStr(""), alias="OPENAI_API_KEY")
    llm: LLMSettings = LLMSettings()
    # a recap in "processing" untouched this long has lost its worker (well past the task's hard limit)
    stale_after_s: int = 900
    max_attempts: int = 3


@lru_cache
def get_settings() -> Settings:
    return Settings()
