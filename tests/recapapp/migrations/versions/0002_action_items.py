"""action items, saved beside the summary

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-20 16:40:00
"""
from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("recaps", sa.Column("action_items", sa.JSON))


def downgrade() -> None:
    op.drop_column("recaps", "action_items")
