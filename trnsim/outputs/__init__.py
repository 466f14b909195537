"""What results become: tables, pictures, reports and exported files."""
