"""the recaps table

Revision ID: 0001
Revises:
Create Date: 2026-11-02 10:12:00
"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STATUS = sa.Enum("pending", "processing", "completed", "failed", name="recap_status")


def upgrade() -> None:
    op.create_table(
        "recaps",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("language", sa.String(8), nullable=False),
        sa.Column("transcript", sa.Text, nullable=False),
        sa.Column("status", STATUS, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("summary", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False),
    )
    op.create_index("recaps_status_updated", "recaps", ["status", "updated_at"])


def downgrade() -> None:
    op.drop_table("recaps")
    STATUS.drop(op.get_bind())
